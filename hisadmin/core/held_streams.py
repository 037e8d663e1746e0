"""Held streams: a patient's event stream a consumer failed on for good, kept visible.

When an event cannot be projected (or fanned out to webhooks) after its retries it goes to
the consumer's dead letters and its stream is **held** for that consumer: one marker
document per consumer and stream in a small partition of its own (``V_HeldStreams``, id
``<consumer>.<stream key>``, written and read only by
:mod:`hisadmin.core.persistence.held_streams`). A leaf module, so every app's consumer can
hold a stream and the shell's health check can list them. The marker names the first event
that failed (its sequence number, type and the time it happened) and why. While it is there the
patient's views are not current: ``/healthz`` answers 503, the worklist pages show a notice
on the patient's rows, ``check_worklists`` lists it, and the patient's later events are
parked in the dead letters unprojected (they would fail the same way, from the same record).
Replaying the stream's letters in order, once the record is repaired, removes the marker.

Each consumer releases its own holds: the projections project their letters, the webhooks
and ADT out (consumer ``hl7``) fan theirs out again. An app registers how
(:func:`register_releaser`, when it loads), so the operators' commands release every
consumer's holds without importing the apps.

A healthy system has no marker, so the partition is read whole (one query) and kept for a
second per process (:func:`held_now`): the projections' hot path pays no round trip for it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from hisadmin.core.cache import ExpiringCache
from hisadmin.core.persistence import held_streams as markers
from hisadmin.core.persistence.held_streams import HELD_PK, PROJECTIONS, HeldStream, marker_id

__all__ = ["HL7", "HELD_PK", "PROJECTIONS", "WEBHOOKS", "HeldStream", "all_held", "forget",
           "held_now", "hold", "marker_id", "read", "register_releaser", "release", "releaser"]

WEBHOOKS = "webhooks"  # the webhook fan-out's holds
HL7 = "hl7"  # ADT out's fan-out's holds (the HL7 destinations)
# ADT out's deliveries held after their retry budget: a destination's tracker waits at the
# message until it is replayed (webhooks.delivery.drain, hl7v2.outbound.tasks).
HL7_DELIVERY = "hl7-delivery"
CACHE_SECONDS = 1.0  # how stale a process's view of the markers may be
_cache: ExpiringCache[list[HeldStream]] = ExpiringCache(CACHE_SECONDS, maxsize=16)


def read(store: DocumentStore, stream_pk: str, consumer: str = PROJECTIONS
         ) -> HeldStream | None:
    """The stream's marker, or None when it is not held (one point read)."""
    return markers.read(store, stream_pk, consumer)


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
        try:
            saved = markers.save(store, marker, over=current)
        except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
            continue  # held or released meanwhile: look again
        forget()
        return saved
    raise errors.PreconditionFailed(f"held marker of {stream_pk} kept changing")


def release(store: DocumentStore, marker: HeldStream) -> bool:
    """Remove the marker unless it changed since it was read (held again at an earlier
    event meanwhile); True when removed (or already gone)."""
    try:
        markers.delete(store, marker)
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
    every = markers.every(store, limit)
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
