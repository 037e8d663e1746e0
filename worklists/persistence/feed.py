"""The patients' events as the projections see them: found in the change feed, read by id.

Every event document is ``(stream, seq)`` plus its contents (``seq``, ``type``, ``data``);
tasks carry only the pair and re-read the contents here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cosmos_backend.outbox import event_id, is_event
from cosmos_backend.store import Cond, Document, DocumentStore, Query, iter_feed
from hisadmin.core import keys

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
    doc = store.try_read(stream, event_id(seq))
    return None if doc is None else doc["docContents"]


def read_events(store: DocumentStore, stream: str, seqs: Iterable[int]
                ) -> dict[int, dict[str, Any]]:
    """Events of ``stream`` by sequence number (their contents), in one round trip: a point
    read for one, a query of the stream's partition for several. Events gone (TTL) are
    missing from the answer."""
    wanted = sorted(set(seqs))
    if len(wanted) == 1:
        event = read_event(store, stream, wanted[0])
        return {} if event is None else {wanted[0]: event}
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
