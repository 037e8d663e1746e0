"""A real stack per test module: embedded Redis, a Celery worker process and the relay."""

from __future__ import annotations

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
