"""Dead letters: projections that failed for good, kept for admins to see and replay.

One small partition (``V_DeadLetters``): entries expire after 90 days, and a healthy system
has none, so it stays far below any partition limit.
"""

from __future__ import annotations

from datetime import UTC, datetime

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import event_id
from cosmos_backend.store import Document, DocumentStore, Query
from worklists.projection.schema import DEAD_LETTERS_PK

RETENTION = 90 * 24 * 3600  # seconds; a dead letter nobody replays expires after 90 days


def letter_id(stream_pk: str, seq: int) -> str:
    return f"{stream_pk}.{seq:010d}"


def record(store: DocumentStore, *, stream_pk: str, seq: int, reason: str,
           attempts: int) -> Document:
    event = store.try_read(stream_pk, event_id(seq))
    event_type = event["docContents"].get("type") if event else None
    return store.upsert(wrap(
        doc_id=letter_id(stream_pk, seq), pk=DEAD_LETTERS_PK, doc_type="DeadLetter",
        contents={"stream": stream_pk, "seq": seq, "eventType": event_type,
                  "reason": reason[:500], "attempts": attempts,
                  "failedAt": datetime.now(UTC).isoformat()},
        ttl=RETENTION))


def all_letters(store: DocumentStore, limit: int = 500) -> list[Document]:
    return store.query(DEAD_LETTERS_PK, Query(order_by=(("id", "ASC"),)),
                       page_size=limit).items


def count(store: DocumentStore) -> int:
    return len(all_letters(store))


def get(store: DocumentStore, doc_id: str) -> Document | None:
    return store.try_read(DEAD_LETTERS_PK, doc_id)


def remove(store: DocumentStore, doc: Document) -> None:
    try:
        store.delete(DEAD_LETTERS_PK, doc["id"], if_match=doc["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass  # replayed or re-failed meanwhile


def replay(store: DocumentStore, doc: Document, *, inline: bool = False) -> str:
    """Send the event through the projection again; it lands here again if it still fails.

    The letter is removed first: a re-failure writes a fresh one (upsert, same id).
    """
    c = doc["docContents"]
    remove(store, doc)
    if inline:
        from worklists.delivery.projector import project_event

        try:
            outcomes = project_event(store, c["stream"], int(c["seq"]))
        except Exception as exc:  # noqa: BLE001 - still failing: back to the dead letters
            record(store, stream_pk=c["stream"], seq=int(c["seq"]),
                   reason=f"{type(exc).__name__}: {exc}", attempts=int(c["attempts"]) + 1)
            return f"failed again ({type(exc).__name__})"
        return ",".join(f"g{g}:{o}" for g, o in outcomes.items())
    from worklists.delivery.tasks import project_event as task

    task.apply_async(args=[c["stream"], int(c["seq"])], retry=False)
    return "queued"
