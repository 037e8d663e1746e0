"""The access log's queue: a record is queued, not written, in the request; the writer
thread writes batches; nothing is dropped when the sink fails or the queue is full."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from hisadmin.core.access_log import Access, AccessLog, Channel


def access(n: int) -> Access:
    return Access(
        at=datetime.now(UTC),
        patient_id=f"p{n}",
        part="Chart",
        channel=Channel.PAGE,
        user_id=1,
        username="rn",
        client="10.0.0.1",
    )


class Sink:
    """A fake sink: keeps batches; fails while ``failing``; may be slow."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.batches: list[list[str]] = []
        self.failing = False
        self.delay = delay
        self.threads: set[str] = set()

    def __call__(self, accesses: Sequence[Access]) -> None:
        self.threads.add(threading.current_thread().name)
        time.sleep(self.delay)
        if self.failing:
            raise ConnectionError("database down")
        self.batches.append([a.patient_id for a in accesses])

    def written(self) -> list[str]:
        return [pid for batch in self.batches for pid in batch]


def wait_for(condition: object, seconds: float = 5.0) -> None:
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:  # type: ignore[operator]
        time.sleep(0.01)


def test_it_writes_at_once_without_a_writer_thread() -> None:
    sink = Sink()
    log = AccessLog(sink)
    log.record(access(1))
    assert sink.written() == ["p1"] and sink.threads == {threading.current_thread().name}


def test_it_queues_in_the_request_and_writes_batches_in_the_background() -> None:
    sink = Sink(delay=0.05)  # a slow database does not slow the recording request
    log = AccessLog(sink, interval=0.05, batch=10)
    log.start_writer()
    started = time.perf_counter()
    for n in range(25):
        log.record(access(n))
    assert time.perf_counter() - started < 0.5  # written in the request: 25 × 0.05 s at least
    wait_for(lambda: len(sink.written()) == 25)
    assert sink.written() == [f"p{n}" for n in range(25)]  # in order
    assert max(len(b) for b in sink.batches) <= 10
    assert sink.threads == {"access-log-writer"}


def test_a_failing_sink_keeps_the_records_and_they_are_written_later() -> None:
    sink = Sink()
    sink.failing = True
    log = AccessLog(sink, interval=0.02)
    log.start_writer()
    for n in range(3):
        log.record(access(n))
    time.sleep(0.1)
    assert log.pending() == 3 and sink.written() == []
    sink.failing = False
    wait_for(lambda: log.pending() == 0)
    assert sink.written() == ["p0", "p1", "p2"]


def test_a_full_queue_writes_in_the_request_rather_than_dropping() -> None:
    sink = Sink()
    sink.failing = True
    log = AccessLog(sink, interval=60, limit=2)
    log.start_writer()
    log.record(access(1))
    log.record(access(2))
    with pytest.raises(ConnectionError):  # the request learns it could not be recorded
        log.record(access(3))
    sink.failing = False
    log.record(access(4))
    assert log.flush() == 2
    assert sorted(sink.written()) == ["p1", "p2", "p4"]


def test_flush_without_a_sink_says_so() -> None:
    log = AccessLog()
    with pytest.raises(RuntimeError, match="no access log sink"):
        log.record(access(1))
