"""Held streams: a patient's event stream a consumer failed on for good, kept visible.

When an event cannot be projected (or fanned out to webhooks) after its retries it goes to
the consumer's dead letters and its stream is **held** for that consumer: one marker
document per consumer and stream in a small partition of its own (``V_HeldStreams``, id
``<consumer>.<stream key>``). A leaf module (documents and partitions only), so every app's
consumer can hold a stream and the shell's health check can list them. The marker names the first event that failed
(its sequence number, type and the time it happened) and why. While it is there the
patient's views are not current: ``/healthz`` answers 503, the worklist pages show a notice
on the patient's rows, ``check_worklists`` lists it, and the patient's later events are
parked in the dead letters unprojected (they would fail the same way, from the same record).
Replaying the stream's letters in order, once the record is repaired, removes the marker.

Each consumer releases its own holds: the projections project their letters, the webhooks
and ADT out (consumer ``hl7``) fan theirs out again. An app registers how (:func:`register_releaser`, when it loads), so the operators' commands release every consumer's holds without
importing the apps.

A healthy system has no marker, so the partition is read whole (one query) and kept for a
second per process (:func:`held_now`): the projections' hot path pays no round trip for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore, Query
from hisadmin.core import keys
from hisadmin.core.cache import ExpiringCache

HELD_PK = keys.view("HeldStreams")
DOC_TYPE = "HeldStream"
PROJECTIONS = "projections"  # the worklist projections' holds
WEBHOOKS = "webhooks"  # the webhook fan-out's holds
HL7 = "hl7"  # ADT out's fan-out's holds (the HL7 destinations)
# ADT out's deliveries held after their retry budget: a destination's tracker waits at the
# message until it is replayed (webhooks.delivery.drain, hl7v2.outbound.tasks).
HL7_DELIVERY = "hl7-delivery"
CACHE_SECONDS = 1.0  # how stale a process's view of the markers may be
_cache: ExpiringCache[list[HeldStream]] = ExpiringCache(CACHE_SECONDS, maxsize=16)


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


def _held(doc: Document) -> HeldStream:
    c = doc["docContents"]
    return HeldStream(stream=c["stream"], consumer=c.get("consumer") or PROJECTIONS,
                      seq=int(c["seq"]), event_type=c.get("eventType"),
                      occurred_at=c.get("occurredAt"), held_at=c["heldAt"],
                      reason=c.get("reason") or "", etag=doc.get("_etag"))


def marker_id(consumer: str, stream_pk: str) -> str:
    return f"{consumer}.{stream_pk}"


def read(store: DocumentStore, stream_pk: str, consumer: str = PROJECTIONS
         ) -> HeldStream | None:
    """The stream's marker, or None when it is not held (one point read)."""
    doc = store.try_read(HELD_PK, marker_id(consumer, stream_pk))
    return None if doc is None else _held(doc)


def hold(store: DocumentStore, *, stream_pk: str, seq: int, event_type: str | None,
         occurred_at: str | None, reason: str, consumer: str = PROJECTIONS,
         renew: bool = False) -> HeldStream:
    """Mark ``stream_pk`` held at event ``seq``. Idempotent, and the earliest failure wins:
    a stream already held at an earlier event keeps that marker (its views are as of the
    event before the first failure, whatever failed after). With ``renew`` a marker at the
    same event takes the new ``reason`` and time (a release that failed again says why)."""
    for _ in range(5):
        current = read(store, stream_pk, consumer)
        if current is not None and (current.seq < seq or (current.seq == seq and not renew)):
            return current
        if current is not None and current.seq == seq:
            event_type = event_type or current.event_type
            occurred_at = occurred_at or current.occurred_at
        marker = HeldStream(stream=stream_pk, consumer=consumer, seq=seq, event_type=event_type,
                            occurred_at=occurred_at, held_at=datetime.now(UTC).isoformat(),
                            reason=reason[:500])
        doc = wrap(doc_id=marker_id(consumer, stream_pk), pk=HELD_PK, doc_type=DOC_TYPE, contents=marker.as_dict())
        try:
            saved = (store.create(doc) if current is None
                     else store.replace(doc, if_match=current.etag))
        except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
            continue  # held or released meanwhile: look again
        forget()
        return _held(saved)
    raise errors.PreconditionFailed(f"held marker of {stream_pk} kept changing")


def release(store: DocumentStore, marker: HeldStream) -> bool:
    """Remove the marker unless it changed since it was read (held again at an earlier
    event meanwhile); True when removed (or already gone)."""
    try:
        store.delete(HELD_PK, marker_id(marker.consumer, marker.stream), if_match=marker.etag)
    except errors.NotFound:
        pass
    except errors.PreconditionFailed:
        return False
    forget()
    return True


def all_held(store: DocumentStore, consumer: str | None = None, limit: int = 1000
             ) -> list[HeldStream]:
    """Every held stream (of ``consumer``, or of every consumer), by consumer and stream
    (one query; a healthy system has none)."""
    page = store.query(HELD_PK, Query(order_by=(("id", "ASC"),)), page_size=limit)
    every = [_held(doc) for doc in page.items]
    return [h for h in every if consumer is None or h.consumer == consumer]


def held_now(store: DocumentStore, consumer: str = PROJECTIONS) -> dict[str, HeldStream]:
    """``consumer``'s held streams by stream key, as read at most :data:`CACHE_SECONDS` ago
    in this process (the hot paths: a projection task, a worklist page)."""
    every = _cache.get(id(store), lambda: all_held(store))
    return {h.stream: h for h in every if h.consumer == consumer}


Release = Callable[[DocumentStore, HeldStream], str]
_releasers: dict[str, Release] = {}


def register_releaser(consumer: str, release: Release) -> None:
    """Say how ``consumer``'s held streams are released: ``release(store, marker)`` replays
    the stream's letters in sequence order, then removes the marker, and returns what it
    did, starting with "released" when the marker is gone (else why it stays held).
    Registered again, the latest wins (an app's ``ready`` may run more than once)."""
    _releasers[consumer] = release


def releaser(consumer: str) -> Release | None:
    """The registered release of ``consumer``'s holds, or None (none registered)."""
    return _releasers.get(consumer)


def forget() -> None:
    """Drop this process's cached markers (after a hold or release here; tests)."""
    _cache.forget()
