"""Who consumes the outbox: each app registers the Celery tasks that want its events.

The relay reads the change feed and, for every event document, sends each consumer whose
stream prefix and event types match a task message carrying only ``(stream_pk, seq)``; the
task re-reads the event itself (ids travel, never patient data).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Consumer:
    task: str  # the Celery task's name; called with (stream_pk, seq)
    queue: str
    stream_prefix: str  # the partition keys of the streams it follows, e.g. "P_"
    event_types: frozenset[str] | None = None  # None: every event of those streams

    def wants(self, stream_pk: str, event_type: str) -> bool:
        return stream_pk.startswith(self.stream_prefix) and (
            self.event_types is None or event_type in self.event_types)


_consumers: list[Consumer] = []


def register_consumer(task: str, *, queue: str, stream_prefix: str,
                      event_types: Iterable[str] | None = None) -> None:
    """Add a consumer (idempotent: an app's ``ready`` may run more than once in tests)."""
    consumer = Consumer(task, queue, stream_prefix,
                        None if event_types is None else frozenset(map(str, event_types)))
    if consumer not in _consumers:
        _consumers.append(consumer)


def consumers() -> tuple[Consumer, ...]:
    return tuple(_consumers)


def consumers_of(stream_pk: str, event_type: str) -> list[Consumer]:
    return [c for c in _consumers if c.wants(stream_pk, event_type)]
