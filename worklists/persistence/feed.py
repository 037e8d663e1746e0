"""The patients' events as the projections find them in the change feed.

Every event document is ``(stream, seq)`` plus its contents (``seq``, ``type``, ``data``);
tasks carry only the pair and re-read the contents with
:func:`hisadmin.core.recent_events.read_events`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cosmos_backend.outbox import is_event
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core import keys
from patients.persistence.queries import patient_documents


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
    """Every registered patient (:func:`patients.persistence.queries.patient_documents`)."""
    for doc in patient_documents(store):
        yield keys.suffix(doc["partitionKey"])
