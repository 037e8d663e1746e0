"""Webhook dead letters: deliveries that failed for good, kept for admins to see and replay.

One small partition (``V_WebhookDeadLetters``); entries expire after 90 days, like the
projections' dead letters. The reason is the HTTP status or the error's class, never a
response body (a receiver's answer could echo patient data).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore, Query
from hisadmin.core import keys

DEAD_LETTERS_PK = keys.view("WebhookDeadLetters")
RETENTION = 90 * 24 * 3600  # seconds
DOC_TYPE = "WebhookDeadLetter"


@dataclass(frozen=True)
class DeadLetter:
    id: str
    subscription_id: str
    stream: str
    seq: int
    event_type: str
    reason: str
    attempts: int
    failed_at: str  # ISO 8601
    etag: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """snake_case, as the API and pages show it."""
        return {
            "id": self.id,
            "subscription_id": self.subscription_id,
            "stream": self.stream,
            "seq": self.seq,
            "event_type": self.event_type,
            "reason": self.reason,
            "attempts": self.attempts,
            "failed_at": self.failed_at,
        }


def letter_id(subscription_id: str, stream: str, seq: int) -> str:
    return f"{subscription_id}.{stream}.{seq:010d}"


def _letter(doc: Document) -> DeadLetter:
    c = doc["docContents"]
    return DeadLetter(
        id=doc["id"],
        subscription_id=c["subscription"],
        stream=c["stream"],
        seq=int(c["seq"]),
        event_type=c["eventType"],
        reason=c["reason"],
        attempts=int(c["attempts"]),
        failed_at=c["failedAt"],
        etag=doc["_etag"],
    )


def record(
    store: DocumentStore,
    *,
    subscription_id: str,
    stream: str,
    seq: int,
    event_type: str,
    reason: str,
    attempts: int,
) -> DeadLetter:
    """Keep (or replace) the dead letter of one event for one subscription."""
    doc = store.upsert(
        wrap(
            doc_id=letter_id(subscription_id, stream, seq),
            pk=DEAD_LETTERS_PK,
            doc_type=DOC_TYPE,
            contents={
                "subscription": subscription_id,
                "stream": stream,
                "seq": seq,
                "eventType": event_type,
                "reason": reason[:300],
                "attempts": attempts,
                "failedAt": datetime.now(UTC).isoformat(),
            },
            ttl=RETENTION,
        )
    )
    return _letter(doc)


def all_letters(store: DocumentStore, limit: int = 500) -> list[DeadLetter]:
    page = store.query(DEAD_LETTERS_PK, Query(order_by=(("id", "ASC"),)), page_size=limit)
    return [_letter(doc) for doc in page.items]


def find(store: DocumentStore, letter_id_: str) -> DeadLetter | None:
    doc = store.try_read(DEAD_LETTERS_PK, letter_id_)
    return None if doc is None else _letter(doc)


def remove(store: DocumentStore, letter: DeadLetter) -> bool:
    """Delete the letter unless it changed since it was read; True when this call did."""
    try:
        store.delete(DEAD_LETTERS_PK, letter.id, if_match=letter.etag)
    except (errors.NotFound, errors.PreconditionFailed):
        return False
    return True
