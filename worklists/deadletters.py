"""Dead letters: projection tasks that failed for good, kept for admins to see and replay."""

from __future__ import annotations

from datetime import UTC, datetime

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore, Query

from .schema import DEAD_LETTERS_PK

RETENTION = 90 * 24 * 3600  # seconds; a dead letter nobody replays expires after 90 days


def record(store: DocumentStore, *, stream_pk: str, seq: int, event_type: str,
           reason: str, attempts: int) -> None:
    doc_id = f"{stream_pk}.{seq}"
    # The reason is an exception class and message from our own code: no patient data.
    store.upsert(wrap(doc_id=doc_id, pk=DEAD_LETTERS_PK, doc_type="DeadLetter", contents={
        "stream": stream_pk, "seq": seq, "eventType": event_type, "reason": reason[:500],
        "attempts": attempts, "failedAt": datetime.now(UTC).isoformat(),
    }, ttl=RETENTION))


def all_letters(store: DocumentStore) -> list[Document]:
    return store.query_all(DEAD_LETTERS_PK, Query(order_by=(("id", "ASC"),)))


def remove(store: DocumentStore, doc: Document) -> None:
    try:
        store.delete(DEAD_LETTERS_PK, doc["id"], if_match=doc["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass
