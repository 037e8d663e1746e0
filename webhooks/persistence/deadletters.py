"""Webhook dead letters: what failed for good, kept for admins to see and replay.

Two kinds, in one small partition (``V_WebhookDeadLetters``); entries expire after 90 days,
like the projections' dead letters:

- ``delivery``: one event that one subscription's receiver kept refusing (id
  ``<subscription>.<stream>.<seq>``). The reason is the HTTP status or the error's class,
  never a response body (a receiver's answer could echo patient data).
- ``fan-out``: one event the fan-out failed on before reaching any subscription, or one
  parked behind such an event while its stream is held for the webhooks (id
  ``fan-out.<stream>.<seq>``, no subscription). The reason is the error's class and message
  (a store's messages carry ids, not data).

Another fan-out that holds streams the same way (ADT out's, :mod:`hl7v2.outbound.tasks`) keeps
its fan-out letters here too, under its own id prefix (``hl7-fan-out.``) and its held-stream
consumer's name (``consumer``): :func:`all_letters` lists one consumer's letters, the
webhooks' by default, so each fan-out's letters are shown and replayed by its own app.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from hisadmin.core import keys
from hisadmin.core.held_streams import WEBHOOKS

DEAD_LETTERS_PK = keys.view("WebhookDeadLetters")
RETENTION = 90 * 24 * 3600  # seconds
DOC_TYPE = "WebhookDeadLetter"
DELIVERY = "delivery"  # a subscription's delivery that failed for good
FAN_OUT = "fan-out"  # the fan-out of an event that failed (or waits behind one), per event
FAN_OUT_PREFIX = "fan-out."  # subscription ids are hex: no delivery letter starts with it


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
    kind: str = DELIVERY  # DELIVERY, or FAN_OUT (subscription_id is then "")
    consumer: str = WEBHOOKS  # whose letter: the held-stream consumer of its fan-out

    def as_dict(self) -> dict[str, Any]:
        """snake_case, as the API and pages show it."""
        return {
            "id": self.id,
            "kind": self.kind,
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


def fan_out_letter_id(stream: str, seq: int, prefix: str = FAN_OUT_PREFIX) -> str:
    return f"{prefix}{stream}.{seq:010d}"


def _letter(doc: Document) -> DeadLetter:
    c = doc["docContents"]
    return DeadLetter(
        id=doc["id"],
        subscription_id=c.get("subscription") or "",
        stream=c["stream"],
        seq=int(c["seq"]),
        event_type=c.get("eventType") or "",
        reason=c["reason"],
        attempts=int(c["attempts"]),
        failed_at=c["failedAt"],
        etag=doc["_etag"],
        kind=c.get("kind") or DELIVERY,
        consumer=c.get("consumer") or WEBHOOKS,
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
                "kind": DELIVERY,
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


def record_fan_out(
    store: DocumentStore,
    *,
    stream: str,
    seq: int,
    event_type: str,
    reason: str,
    attempts: int,
    prefix: str = FAN_OUT_PREFIX,
    consumer: str = WEBHOOKS,
) -> DeadLetter:
    """Keep (or replace) the fan-out letter of event ``seq`` of ``stream``: ``attempts`` 0
    for an event parked behind a held one (never tried). ``prefix`` and ``consumer``: whose
    fan-out (the webhooks' by default; their letters carry no ``consumer``)."""
    contents: dict[str, Any] = {
        "kind": FAN_OUT,
        "subscription": "",
        "stream": stream,
        "seq": seq,
        "eventType": event_type,
        "reason": reason[:300],
        "attempts": attempts,
        "failedAt": datetime.now(UTC).isoformat(),
    }
    if consumer != WEBHOOKS:
        contents["consumer"] = consumer
    doc = store.upsert(
        wrap(
            doc_id=fan_out_letter_id(stream, seq, prefix),
            pk=DEAD_LETTERS_PK,
            doc_type=DOC_TYPE,
            contents=contents,
            ttl=RETENTION,
        )
    )
    return _letter(doc)


def fan_out_letters(
    store: DocumentStore, stream: str, prefix: str = FAN_OUT_PREFIX
) -> list[DeadLetter]:
    """The stream's fan-out letters (under ``prefix``) in sequence order (one query; ids
    sort by sequence)."""
    query = Query(where=(Cond("id", "startswith", f"{prefix}{stream}."),),
                  order_by=(("id", "ASC"),))
    return [_letter(doc) for doc in store.query_all(DEAD_LETTERS_PK, query)]


def read_fan_out(
    store: DocumentStore, stream: str, seq: int, prefix: str = FAN_OUT_PREFIX
) -> DeadLetter | None:
    """The fan-out letter of event ``seq`` of ``stream`` (under ``prefix``), or None (one
    point read)."""
    return find(store, fan_out_letter_id(stream, seq, prefix))


def all_letters(
    store: DocumentStore, limit: int = 500, consumer: str = WEBHOOKS
) -> list[DeadLetter]:
    """``consumer``'s letters (the webhooks' by default: their deliveries' and their
    fan-out's), by id."""
    page = store.query(DEAD_LETTERS_PK, Query(order_by=(("id", "ASC"),)), page_size=limit)
    return [letter for letter in map(_letter, page.items) if letter.consumer == consumer]


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
