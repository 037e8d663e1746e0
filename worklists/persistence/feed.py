"""The patients' events as the projections find them in the change feed.

Every event document is ``(stream, seq)`` plus its contents (``seq``, ``type``, ``data``);
tasks carry only the pair and re-read the contents with
:func:`hisadmin.core.recent_events.read_events`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cosmos_backend.outbox import is_event
from cosmos_backend.store import Document, DocumentStore, iter_feed
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


def patient_ids(store: DocumentStore) -> Iterator[str]:
    """Every registered patient, by scanning the change feed from the beginning (the one way
    to list every partition on Cosmos without a cross-partition query)."""
    for feed_range in store.feed_ranges():
        for page in iter_feed(store, feed_range, max_items=1000):
            for doc in page.items:
                if (doc.get("docType") == PATIENT_DOC_TYPE
                        and doc["partitionKey"].startswith(keys.PATIENT)):
                    yield keys.suffix(doc["partitionKey"])
