"""The held-stream markers' documents: one per consumer and stream in ``V_HeldStreams``, id
``<consumer>.<stream key>``. The repository :mod:`hisadmin.core.held_streams` decides when a
stream is held or released; this module alone maps a marker to its document and back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cosmos_backend.envelope import contents, etag, wrap
from cosmos_backend.store import Document, DocumentStore, Query
from hisadmin.core import keys

HELD_PK = keys.view("HeldStreams")
DOC_TYPE = "HeldStream"
PROJECTIONS = "projections"  # the worklist projections' holds


@dataclass(frozen=True)
class HeldStream:
    """A held stream: ``seq`` is the first event that failed for good (the views are as of
    the event before it); ``occurred_at`` when that event happened (the views are "not
    current since" then); ``held_at`` when the projection gave up."""

    stream: str
    consumer: str
    seq: int
    event_type: str | None
    occurred_at: str | None
    held_at: str
    reason: str
    etag: str | None = None

    @property
    def patient_id(self) -> str:
        return keys.suffix(self.stream)

    @property
    def since(self) -> str:
        """The time the views stopped being current: the held event's, else the hold's."""
        return self.occurred_at or self.held_at

    def as_dict(self) -> dict[str, Any]:
        """The marker as operators see it (``check_worklists``, ``relay_status --json``)."""
        return {"stream": self.stream, "consumer": self.consumer,
                "patientId": self.patient_id, "seq": self.seq,
                "eventType": self.event_type, "occurredAt": self.occurred_at,
                "heldAt": self.held_at, "reason": self.reason}


def marker_id(consumer: str, stream_pk: str) -> str:
    return f"{consumer}.{stream_pk}"


def _held(doc: Document) -> HeldStream:
    c = contents(doc)
    return HeldStream(stream=c["stream"], consumer=c.get("consumer") or PROJECTIONS,
                      seq=int(c["seq"]), event_type=c.get("eventType"),
                      occurred_at=c.get("occurredAt"), held_at=c["heldAt"],
                      reason=c.get("reason") or "", etag=etag(doc))


def _doc(marker: HeldStream) -> Document:
    return wrap(doc_id=marker_id(marker.consumer, marker.stream), pk=HELD_PK,
                doc_type=DOC_TYPE, contents=marker.as_dict())


def read(store: DocumentStore, stream_pk: str, consumer: str) -> HeldStream | None:
    """The stream's marker, or None when it is not held (one point read)."""
    doc = store.try_read(HELD_PK, marker_id(consumer, stream_pk))
    return None if doc is None else _held(doc)


def save(store: DocumentStore, marker: HeldStream, *, over: HeldStream | None) -> HeldStream:
    """Create ``marker``, or replace ``over`` (the marker read before, under its etag). The
    store's Conflict, PreconditionFailed or NotFound says it changed meanwhile."""
    saved = (store.create(_doc(marker)) if over is None
             else store.replace(_doc(marker), if_match=over.etag))
    return _held(saved)


def delete(store: DocumentStore, marker: HeldStream) -> None:
    """Remove ``marker`` under its etag (the store's NotFound / PreconditionFailed pass)."""
    store.delete(HELD_PK, marker_id(marker.consumer, marker.stream), if_match=marker.etag)


def every(store: DocumentStore, limit: int) -> list[HeldStream]:
    """Every marker, by id (one query of the small partition)."""
    page = store.query(HELD_PK, Query(order_by=(("id", "ASC"),)), page_size=limit)
    return [_held(doc) for doc in page.items]
