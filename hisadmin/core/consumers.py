"""Who consumes the outbox: each app registers the Celery tasks that want its events.

The relay reads the change feed and, for every event document, sends each consumer whose
stream prefix and event types match a task message carrying only the stream key and the
sequence numbers; the task re-reads the events itself (ids travel, never patient data). A
consumer may have a ``gate``: asked once per change-feed page that has events for it, after
the page was read, and when it says no, nothing is sent (an event committed after what the
gate depends on is in a later read of the feed, so it is never missed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Consumer:
    task: str  # the Celery task's name; called with (stream_pk, seq)
    queue: str
    stream_prefix: str  # the partition keys of the streams it follows, e.g. "P_"
    event_types: frozenset[str] | None = None  # None: every event of those streams
    gate: Callable[[], bool] | None = field(default=None, compare=False)  # None: always
    # True: one message per change-feed page, ``args=[[[stream, [seq, …]], …]]`` (every
    # stream of the page, each with its events in order), for a consumer that applies a
    # page in one go; False: one message per stream, ``args=[stream, [seq, …]]``.
    per_page: bool = False

    def wants(self, stream_pk: str, event_type: str) -> bool:
        return stream_pk.startswith(self.stream_prefix) and (
            self.event_types is None or event_type in self.event_types)


_consumers: list[Consumer] = []


def register_consumer(task: str, *, queue: str, stream_prefix: str,
                      event_types: Iterable[str] | None = None,
                      gate: Callable[[], bool] | None = None, per_page: bool = False) -> None:
    """Add a consumer (idempotent: an app's ``ready`` may run more than once in tests)."""
    consumer = Consumer(task, queue, stream_prefix,
                        None if event_types is None else frozenset(map(str, event_types)),
                        gate, per_page)
    if consumer not in _consumers:
        _consumers.append(consumer)


def consumers() -> tuple[Consumer, ...]:
    return tuple(_consumers)


def consumers_of(stream_pk: str, event_type: str) -> list[Consumer]:
    return [c for c in _consumers if c.wants(stream_pk, event_type)]


def seqs_of(seq: int | list[int]) -> list[int]:
    """The sequence numbers a consumer's message carries: a list, or one number (messages
    sent before the relay grouped a page's events per stream)."""
    return [int(s) for s in seq] if isinstance(seq, list | tuple) else [int(seq)]


# ------------------------------------------------------------------ sweepers
# Work that runs beside every relay (``manage.py run_relay``, the worker's ``--relay``) on a
# thread of its own: an app's sweeper re-drives what its store state says is owed and its
# tasks lost (the webhooks' and ADT out's delivery sweeper). ``start()`` returns something
# with ``stop()``.
_sweepers: dict[str, Callable[[], Any]] = {}


def register_sweeper(name: str, start: Callable[[], Any]) -> None:
    """Add a sweeper (idempotent by name: an app's ``ready`` may run more than once)."""
    _sweepers[name] = start


def start_sweepers() -> list[Any]:
    """Start every registered sweeper; the relay's process stops them when it stops."""
    return [start() for start in _sweepers.values()]
