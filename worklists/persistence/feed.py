"""The patients' events as the projections see them: found in the change feed, read by id.

Every event document is ``(stream, seq)`` plus its contents (``seq``, ``type``, ``data``);
tasks carry only the pair and re-read the contents here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cosmos_backend.outbox import STREAM_ID, event_id, is_event
from cosmos_backend.store import Cond, Document, DocumentStore, Query, iter_feed
from hisadmin.core import keys, recent_events

PATIENT_DOC_TYPE = "Patient"


@dataclass(frozen=True)
class EventRef:
    """Where an event is (its stream partition and sequence), its type, and when it was
    written."""

    stream: str
    seq: int
    type: str
    written_at: float | None  # the store's _ts, seconds since the epoch


def events_in(docs: Iterable[Document]) -> list[EventRef]:
    """The events among a feed page's documents, in feed order."""
    return [EventRef(doc["partitionKey"], int(doc["docContents"]["seq"]),
                     doc["docContents"]["type"], doc.get("_ts"))
            for doc in docs if is_event(doc)]


def read_event(store: DocumentStore, stream: str, seq: int) -> dict[str, Any] | None:
    """Event ``seq`` of ``stream`` (its contents), or None when it is gone (TTL)."""
    return read_events(store, stream, [seq]).get(seq)


def stream_head(store: DocumentStore, stream: str) -> int:
    """The stream's last sequence number (0 when it has none), in one point read."""
    doc = store.try_read(stream, STREAM_ID)
    return 0 if doc is None else int(doc["docContents"]["seq"])


def read_events(store: DocumentStore, stream: str, seqs: Iterable[int]
                ) -> dict[int, dict[str, Any]]:
    """Events of ``stream`` by sequence number (their contents), in at most one round trip:
    none for events a relay in this process just read (:mod:`hisadmin.core.recent_events`),
    else a point read for one, a query of the stream's partition for several. Events gone
    (TTL) are missing from the answer."""
    return recent_events.read_through(stream, seqs, lambda missing: _read(store, stream,
                                                                          missing))


def _read(store: DocumentStore, stream: str, wanted: list[int]) -> dict[int, dict[str, Any]]:
    if len(wanted) == 1:
        doc = store.try_read(stream, event_id(wanted[0]))
        return {} if doc is None else {wanted[0]: doc["docContents"]}
    docs = store.query_all(stream, Query(where=(
        Cond("id", "in", [event_id(seq) for seq in wanted]),)), page_size=len(wanted) or 1)
    return {int(doc["docContents"]["seq"]): doc["docContents"] for doc in docs}


def patient_ids(store: DocumentStore) -> Iterator[str]:
    """Every registered patient, by scanning the change feed from the beginning (the one way
    to list every partition on Cosmos without a cross-partition query)."""
    for feed_range in store.feed_ranges():
        for page in iter_feed(store, feed_range, max_items=1000):
            for doc in page.items:
                if (doc.get("docType") == PATIENT_DOC_TYPE
                        and doc["partitionKey"].startswith(keys.PATIENT)):
                    yield keys.suffix(doc["partitionKey"])
