"""Outbox events a relay in this process has just read off the change feed, for the tasks
this process runs on them; and the one way the apps read events by sequence number.

A task message carries ids only (``[stream, [seq, …]]``), so each consumer re-reads the
events it was sent: one store round trip per message. When the relay runs as a thread of
the worker (``--relay``, the light mode of ``make run``), the worker's tasks are handed
events the same process read a moment earlier. The relay keeps them here, and
:func:`read_events` (the projections, the webhook deliveries, the dead-letter replays)
looks here first and reads the rest from the store.

A copy is as good as a read: an event never changes once its batch committed (the outbox
is append-only; its time to live only deletes it, and a consumer that finds an event
gone rebuilds from the source record, which a copy of the event does not contradict).
Events are kept serialized, so no consumer can change another's copy. The cache holds
the ``MAX_EVENTS`` last read: a page's tasks run within milliseconds to seconds of it, and
an event that dropped out, or a worker with no relay in it, reads the store as before. The
relay applies the views' page in its own thread right after keeping it, so what stays
kept serves the follow-ups' and webhooks' messages through the broker: 500 events are
about a second of the bench's heaviest load (some 480 commands/s under eight clients), more
under the ward-shift mix. 2,000 cost the worker 8–10 MB of its peak memory
(docs/performance.md, "The store files' memory map, and the events kept").
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import orjson

from cosmos_backend import outbox
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core.cache import LruCache

MAX_EVENTS = 500

_kept: LruCache[tuple[str, int], bytes] = LruCache(MAX_EVENTS)
_hits = [0]
_hits_lock = threading.Lock()


def keep(docs: Iterable[Document]) -> None:
    """Keep the events among a change-feed page's documents."""
    for doc in docs:
        if outbox.is_event(doc):
            _kept.put((outbox.event_stream(doc), outbox.event_seq(doc)),
                      orjson.dumps(outbox.event_payload(doc)))


def read_events(store: DocumentStore, stream: str, seqs: Iterable[int]
                ) -> dict[int, dict[str, Any]]:
    """Events ``seqs`` of ``stream`` by sequence number (their contents), in at most one
    round trip: none for the events kept here, one read
    (:func:`cosmos_backend.outbox.read_events`) for the rest. Events gone (TTL) are missing
    from the answer."""
    found: dict[int, dict[str, Any]] = {}
    missing = []
    for seq in sorted(set(seqs)):
        raw = _kept.peek((stream, seq))
        if raw is None:
            missing.append(seq)
        else:
            found[seq] = orjson.loads(raw)
    if missing:
        found.update(outbox.read_events(store, stream, missing))
    elif found:
        with _hits_lock:
            _hits[0] += 1
    return found


def read_event(store: DocumentStore, stream: str, seq: int) -> dict[str, Any] | None:
    """Event ``seq`` of ``stream`` (its contents), or None when it is gone (TTL)."""
    return read_events(store, stream, [seq]).get(seq)


def reads_saved() -> int:
    """How many store reads were answered from here since the process started (the bench
    meters them)."""
    return _hits[0]


def forget() -> None:
    """Drop every kept event (tests)."""
    _kept.forget()
