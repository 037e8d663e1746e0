"""Dead letter documents: projections that failed for good, kept for admins to see and replay.

One small partition (``V_DeadLetters``): entries expire after 90 days, and a healthy system
has none, so it stays far below any partition limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore, Query
from hisadmin.core import keys
from hisadmin.core.recent_events import read_event

DEAD_LETTERS_PK = keys.view("DeadLetters")
RETENTION = 90 * 24 * 3600  # seconds; a dead letter nobody replays expires after 90 days


@dataclass(frozen=True)
class DeadLetter:
    id: str
    stream: str
    seq: int
    event_type: str | None  # None when the event itself was gone
    reason: str
    attempts: int
    failed_at: str  # ISO 8601
    etag: str | None = None
    occurred_at: str | None = None  # when the event happened (None: the event was gone)

    def as_dict(self) -> dict[str, Any]:
        """The letter as operators see it (pages, ``relay_status --json``)."""
        return {"stream": self.stream, "seq": self.seq, "eventType": self.event_type,
                "reason": self.reason, "attempts": self.attempts, "failedAt": self.failed_at,
                "occurredAt": self.occurred_at}


def letter_id(stream_pk: str, seq: int) -> str:
    return f"{stream_pk}.{seq:010d}"


def _letter(doc: Document) -> DeadLetter:
    c = doc["docContents"]
    return DeadLetter(id=doc["id"], stream=c["stream"], seq=int(c["seq"]),
                      event_type=c.get("eventType"), reason=c["reason"],
                      attempts=int(c["attempts"]), failed_at=c["failedAt"], etag=doc["_etag"],
                      occurred_at=c.get("occurredAt"))


def record(store: DocumentStore, *, stream_pk: str, seq: int, reason: str,
           attempts: int) -> DeadLetter:
    """Keep (or replace) the dead letter of event ``seq`` of ``stream_pk``."""
    event = read_event(store, stream_pk, seq)
    letter = DeadLetter(id=letter_id(stream_pk, seq), stream=stream_pk, seq=seq,
                        event_type=event.get("type") if event else None, reason=reason[:500],
                        attempts=attempts, failed_at=datetime.now(UTC).isoformat(),
                        occurred_at=event.get("occurredAt") if event else None)
    doc = store.upsert(wrap(doc_id=letter.id, pk=DEAD_LETTERS_PK, doc_type="DeadLetter",
                            contents=letter.as_dict(), ttl=RETENTION))
    return _letter(doc)


def all_letters(store: DocumentStore, limit: int = 500) -> list[DeadLetter]:
    page = store.query(DEAD_LETTERS_PK, Query(order_by=(("id", "ASC"),)), page_size=limit)
    return [_letter(doc) for doc in page.items]


def letters_of(store: DocumentStore, stream_pk: str) -> list[DeadLetter]:
    """The stream's letters, in sequence order (ids sort by sequence number)."""
    return [letter for letter in all_letters(store) if letter.stream == stream_pk]


def read_letter(store: DocumentStore, stream_pk: str, seq: int) -> DeadLetter | None:
    doc = store.try_read(DEAD_LETTERS_PK, letter_id(stream_pk, seq))
    return None if doc is None else _letter(doc)


def count(store: DocumentStore) -> int:
    return len(all_letters(store))


def remove(store: DocumentStore, letter: DeadLetter) -> None:
    """Delete the letter unless it changed since it was read (replayed or failed again)."""
    try:
        store.delete(DEAD_LETTERS_PK, letter.id, if_match=letter.etag)
    except (errors.NotFound, errors.PreconditionFailed):
        pass
