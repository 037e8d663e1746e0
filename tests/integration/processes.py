"""Start and stop the real processes of the product for integration and fault tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def stack_env(store_path: Path, var_dir: Path, broker_url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="hisadmin.settings",
        EMBEDDED_STORE_PATH=str(store_path),
        HIS_VAR_DIR=str(var_dir),
        REDIS_URL=broker_url,
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        # As make run starts its workers: `migrate` ran Django's checks, and a worker that
        # runs them again loads the URL configuration it never serves (1.8 → 1.3 CPU-s).
        CELERY_SKIP_CHECKS="1",
        **extra,
    )
    return env


def free_port() -> int:
    """A TCP port nothing listens on now, for a server a test starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("ab")
    return subprocess.Popen(args, env=env, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT,
                            start_new_session=True)


def start_worker(env: dict[str, str], log: Path, concurrency: int = 1) -> subprocess.Popen[bytes]:
    return start([str(BIN / "celery"), "-A", "hisadmin", "worker", "-Q", "projections,celery",
                  "--concurrency", str(concurrency), "--without-gossip", "--without-mingle",
                  "--without-heartbeat", "--loglevel", "INFO", "--pool", "prefork"], env, log)


def start_light_worker(env: dict[str, str], log: Path, *extra: str,
                       threads: int = 2, webhook_threads: int = 1) -> subprocess.Popen[bytes]:
    """The launcher's light mode: one worker process, a thread pool for projections and the
    default queue, the webhooks on a lane of their own, the relay as a thread inside."""
    return start([str(BIN / "celery"), "-A", "hisadmin", "worker", "-Q", "projections,celery",
                  "--pool", "threads", "--concurrency", str(threads),
                  "--webhooks-lane", str(webhook_threads), "--relay", "--without-gossip",
                  "--without-mingle", "--without-heartbeat", "--loglevel", "INFO", *extra],
                 env, log)


def start_relay(env: dict[str, str], log: Path, *extra: str) -> subprocess.Popen[bytes]:
    return start([sys.executable, str(ROOT / "manage.py"), "run_relay", *extra], env, log)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 10) -> None:
    """Stop the process group we started (the worker forks children)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


# Bounded waits return as soon as their condition holds, so a generous bound costs nothing
# when things work; it only keeps a busy 2-core machine (CI, a benchmark beside the suite)
# from failing a test that was merely slow. TEST_WAIT_SCALE=1 gives the nominal bounds.
WAIT_SCALE = float(os.environ.get("TEST_WAIT_SCALE", "2"))


def wait_for(predicate: Callable[[], object], timeout: float, interval: float = 0.05,
             what: str = "condition") -> object:
    timeout *= WAIT_SCALE
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)
