"""The commands' reading of the views' lag: one Redis read per process at a time.

Before a command commits it checks the views' lag (admission control). The reading is kept
for ``_READ_EVERY`` seconds; when it is older, one thread reads it again and the threads that
find it old at the same moment go on with the last reading instead of each reading Redis.
A command already waiting for the views always reads it fresh.
"""

from __future__ import annotations

import threading
import time

import pytest

from hisadmin.core import views_lag


@pytest.fixture
def slow_redis(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """``lag_ms`` as a Redis read that takes 50 ms and answers 400 ms behind; the calls."""
    calls: list[float] = []

    def read(now: float | None = None) -> float:
        calls.append(time.monotonic())
        time.sleep(0.05)
        return 400.0

    monkeypatch.setattr(views_lag, "lag_ms", read)
    monkeypatch.setattr(views_lag, "_last", {"at": 0.0, "ms": 120.0})
    return calls


def test_threads_that_find_the_reading_old_together_read_redis_once(slow_redis) -> None:
    start = threading.Barrier(8)
    got: list[float | None] = []

    def command() -> None:
        start.wait()
        got.append(views_lag._lag_now(fresh=False))

    threads = [threading.Thread(target=command) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(slow_redis) == 1
    assert sorted(got, key=float) == [120.0] * 7 + [400.0]  # the reader has the new figure
    assert views_lag._lag_now(fresh=False) == 400.0 and len(slow_redis) == 1  # kept a while


def test_an_old_reading_is_read_again_and_a_waiting_command_always_reads(slow_redis) -> None:
    assert views_lag._lag_now(fresh=False) == 400.0
    time.sleep(views_lag._READ_EVERY + 0.01)
    views_lag._lag_now(fresh=False)
    assert len(slow_redis) == 2
    views_lag._lag_now(fresh=True)
    views_lag._lag_now(fresh=True)
    assert len(slow_redis) == 4
