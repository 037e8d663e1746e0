"""A real stack per test module: embedded Redis, a Celery worker process and the relay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hisadmin.core import store as handles
from hisadmin.embedded_redis import EmbeddedRedis
from tests.integration.processes import stack_env, start_relay, start_worker, stop


@dataclass
class Stack:
    store_path: Path
    var_dir: Path
    redis: EmbeddedRedis
    env: dict[str, str]
    logs: Path


_STARTED = pytest.StashKey[float]()
LOG_TAIL = 3000  # characters of each process's log shown with a failure


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_STARTED] = time.time()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[pytest.TestReport]:
    """A failed test that ran processes shows the end of each log they wrote during it: a
    timing failure on a loaded machine is read from its report, not reproduced."""
    report = yield
    if report.failed and report.when != "teardown":
        started = item.stash.get(_STARTED, 0.0) - 1
        for directory in _log_dirs(item):
            for path in sorted(directory.glob("*.log")):
                if path.stat().st_mtime >= started:
                    text = path.read_text(errors="replace")
                    report.sections.append((f"log {path.name}", text[-LOG_TAIL:]))
    return report


def _log_dirs(item: pytest.Item) -> list[Path]:
    funcargs = getattr(item, "funcargs", {})
    found = {getattr(value, attr) for value in funcargs.values()
             for attr in ("base", "logs") if isinstance(getattr(value, attr, None), Path)}
    return sorted(d for d in found if d.is_dir())


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("stack")
    redis = EmbeddedRedis(base / "redis")
    env = stack_env(base / "store.sqlite3", base / "var", redis.celery_url)
    s = Stack(base / "store.sqlite3", base / "var", redis, env, base)
    yield s
    redis.shutdown()


@pytest.fixture(scope="module")
def running_stack(stack: Stack) -> Iterator[Stack]:
    worker = start_worker(stack.env, stack.logs / "worker.log")
    relay = start_relay(stack.env, stack.logs / "relay.log", "--lease-ttl", "3")
    yield stack
    stop(relay)
    stop(worker)


@pytest.fixture
def stack_settings(stack: Stack, settings: object) -> Stack:
    """Point this process's store handles and broker at the stack's."""
    cfg = dict(settings.DOCUMENT_STORE)  # type: ignore[attr-defined]
    cfg.update(backend="embedded", path=str(stack.store_path))
    settings.DOCUMENT_STORE = cfg  # type: ignore[attr-defined]
    settings.CELERY_BROKER_URL = stack.redis.celery_url  # type: ignore[attr-defined]
    handles.reset_handles()
    return stack
