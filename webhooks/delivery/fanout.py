"""The fan-out of a patient's events to the subscriptions, and the streams it holds.

:func:`fan_out_events` reads a stream's events (one read) and the subscriptions (one query)
and hands ``send`` one delivery per subscription that wants an event; it never calls out.

A fan-out that fails for good (its task's retries spent) reached no subscription with its
events. :func:`record_failure` then letters the message's first event with the error (a
``fan-out`` letter in the webhooks' dead letters, :mod:`webhooks.persistence.deadletters`),
holds the patient's stream for the webhooks (:mod:`hisadmin.core.held_streams`, consumer
``webhooks``, at that event) and parks the message's other events. While the stream is
held, the fan-out parks that patient's later events as letters too (:func:`held_part`),
never attempted: nothing of the stream reaches a subscription past the failure, and the
order is kept for the replay. :func:`release_stream` fans the held stream's letters out
again in sequence order, then removes the marker; a failure again keeps it held, with the
new error. This module never queues a task itself: the caller passes ``send``.

Another fan-out holds streams the same way through these functions (ADT out's,
:mod:`hl7v2.outbound.tasks`): it passes a :class:`Holder` naming its held-stream consumer,
its letters' id prefix and its own fan-out to run again on release. Without one, the
webhooks' (:data:`WEBHOOKS`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cosmos_backend.outbox import stream_head
from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams
from hisadmin.core.held_streams import HeldStream
from hisadmin.core.recent_events import read_event, read_events
from webhooks.domain.subscriptions import Subscription
from webhooks.persistence import deadletters, subscriptions
from webhooks.persistence.deadletters import DeadLetter

log = logging.getLogger(__name__)
Send = Callable[[str, str, int], None]  # (subscription id, stream, seq): queue one delivery
FanOut = Callable[[DocumentStore, str, list[int], Send], int]  # (store, stream, seqs, send)
PARKED = "HeldStream"  # the reason of a parked letter starts with it: never attempted


@dataclass(frozen=True)
class Holder:
    """Whose fan-out holds a stream: ``consumer`` names its holds
    (:mod:`hisadmin.core.held_streams`), ``prefix`` starts its fan-out letters' ids, and
    ``fan_out`` hands ``send`` one delivery per target that wants each event (run again when
    a held stream is released); None: :func:`fan_out_events`, the webhooks'."""

    consumer: str = held_streams.WEBHOOKS
    prefix: str = deadletters.FAN_OUT_PREFIX
    fan_out: FanOut | None = None

    def run(self, store: DocumentStore, stream_pk: str, seqs: list[int], send: Send) -> int:
        """Fan events ``seqs`` out (looked up when called: tests replace the webhooks')."""
        return (self.fan_out or fan_out_events)(store, stream_pk, seqs, send)


WEBHOOKS = Holder()  # the webhooks' fan-out: every function's default


def reason(exc: BaseException) -> str:
    """What a fan-out letter and its hold say: the error's class and message (a store's
    messages carry ids, never an event's data)."""
    return f"fan-out failed: {type(exc).__name__}: {exc}"


def fan_out_events(
    store: DocumentStore,
    stream_pk: str,
    seqs: Iterable[int],
    send: Send,
    *,
    subs: list[Subscription] | None = None,
) -> int:
    """Hand ``send`` one delivery per subscription that wants each of events ``seqs``, in
    the order given; returns how many. ``subs``: the subscriptions, when already read. An
    event gone (its time to live passed) is skipped. Raises whatever reading raises."""
    subs = subscriptions.all_subscriptions(store) if subs is None else subs
    return hand_out(store, stream_pk, seqs, subs, send)


class Receiver(Protocol):
    """A subscription or any other receiver of events one by one (an HL7 destination)."""

    @property
    def id(self) -> str: ...

    def wants(self, event_type: str) -> bool: ...


def hand_out(store: DocumentStore, stream_pk: str, seqs: Iterable[int],
             receivers: Sequence[Receiver], send: Send) -> int:
    """Hand ``send`` one delivery per receiver that wants each of events ``seqs``, in the
    order given; returns how many. An event gone (its time to live passed) is skipped."""
    if not receivers:
        return 0
    seqs = list(seqs)
    events = read_events(store, stream_pk, seqs)  # one read for them all
    queued = 0
    for one in seqs:
        event = events.get(one)
        if event is None:
            continue
        for receiver in receivers:
            if receiver.wants(event["type"]):
                send(receiver.id, stream_pk, one)
                queued += 1
    return queued


def _types(store: DocumentStore, stream_pk: str, seqs: list[int]) -> dict[int, str]:
    """The events' types for their letters; empty when they cannot be read (best effort:
    a letter without its type still says which event it is)."""
    try:
        return {seq: str(e.get("type") or "") for seq, e in
                read_events(store, stream_pk, seqs).items() if e is not None}
    except Exception:  # noqa: BLE001 - the letter matters more than its label
        return {}


def record_failure(
    store: DocumentStore,
    stream_pk: str,
    seqs: Iterable[int],
    exc: BaseException,
    attempts: int,
    *,
    renew: bool = False,
    holder: Holder = WEBHOOKS,
) -> HeldStream:
    """The fan-out of events ``seqs`` failed for good: letter the first with the error, hold
    the stream for ``holder``'s consumer (the webhooks) at it (the earliest hold wins;
    ``renew`` refreshes the reason of a hold at that same event) and park the others
    behind it."""
    ordered = sorted(set(seqs))
    first = ordered[0]
    event: dict[str, Any] = {}
    try:
        event = read_event(store, stream_pk, first) or {}
    except Exception:  # noqa: BLE001 - the letter and the hold matter more than the label
        log.warning("fan-out %s#%s: its event could not be read for the letter", stream_pk, first)
    letter = deadletters.record_fan_out(
        store,
        stream=stream_pk,
        seq=first,
        event_type=str(event.get("type") or ""),
        reason=reason(exc),
        attempts=attempts,
        prefix=holder.prefix,
        consumer=holder.consumer,
    )
    marker = held_streams.hold(
        store,
        stream_pk=stream_pk,
        seq=first,
        event_type=letter.event_type or None,
        occurred_at=event.get("occurredAt"),
        reason=letter.reason,
        consumer=holder.consumer,
        renew=renew,
    )
    park(store, stream_pk, ordered[1:], marker, holder=holder)
    return marker


def park(
    store: DocumentStore,
    stream_pk: str,
    seqs: Iterable[int],
    marker: HeldStream,
    *,
    holder: Holder = WEBHOOKS,
) -> int:
    """Letter events of a held stream without fanning them out (they wait for the release,
    in order); an event lettered already keeps its letter. Returns how many were parked."""
    waiting = [
        seq
        for seq in sorted(set(seqs))
        if deadletters.read_fan_out(store, stream_pk, seq, holder.prefix) is None
    ]
    types = _types(store, stream_pk, waiting) if waiting else {}
    for seq in waiting:
        deadletters.record_fan_out(
            store,
            stream=stream_pk,
            seq=seq,
            event_type=types.get(seq, ""),
            reason=f"{PARKED}: waits for event {marker.seq} of this stream",
            attempts=0,
            prefix=holder.prefix,
            consumer=holder.consumer,
        )
    return len(waiting)


def held_part(
    store: DocumentStore, stream_pk: str, seqs: list[int], *, holder: Holder = WEBHOOKS
) -> tuple[list[int], HeldStream | None]:
    """Split a fan-out message's ``seqs``: those to fan out now, and the stream's marker for
    ``holder``'s consumer (None when not held). Events from the held one on are parked
    (:func:`park`). The markers are read as a process saw them at most a second ago
    (:func:`~hisadmin.core.held_streams.held_now`): no round trip on the hot path."""
    marker = held_streams.held_now(store, holder.consumer).get(stream_pk)
    if marker is None:
        return seqs, None
    park(store, stream_pk, [s for s in seqs if s >= marker.seq], marker, holder=holder)
    return [s for s in seqs if s < marker.seq], marker


def release_stream(
    store: DocumentStore,
    marker: HeldStream,
    send: Send,
    *,
    settle: float | None = None,
    holder: Holder = WEBHOOKS,
) -> str:
    """Fan a held stream's letters out again in sequence order, then remove its marker;
    "released: …", or "still held (…)" when the fan-out fails again (the first letter and
    the marker then carry the new error, one attempt more).

    A stream whose letters are gone (expired, removed) is fanned out from the held event to
    the stream's head. Fan-outs may park more events while this runs (they see the marker
    for up to :data:`~hisadmin.core.held_streams.CACHE_SECONDS` after it is gone): after
    ``settle`` seconds (that long, by default) any such letter is fanned out too. Fanning
    an event out twice is harmless: each subscription's tracker delivers it once.
    """
    stream = marker.stream
    fanned: list[int] = []
    released = False
    while True:
        waiting = deadletters.fan_out_letters(store, stream, holder.prefix)
        if released and not waiting:
            break
        seqs = [letter.seq for letter in waiting]
        try:
            if not seqs and not released:  # no letter left: the stream itself says what
                seqs = list(range(marker.seq, stream_head(store, stream) + 1))
            holder.run(store, stream, seqs, send)
        except Exception as exc:  # noqa: BLE001 - still failing: the stream stays held
            first = waiting[0] if waiting else None
            record_failure(
                store,
                stream,
                seqs or [marker.seq],
                exc,
                (first.attempts if first else 0) + 1,
                renew=True,
                holder=holder,
            )
            log.error("fan-out %s: release failed (%s); still held", stream, type(exc).__name__)
            return f"still held ({type(exc).__name__})"
        for letter in waiting:
            deadletters.remove(store, letter)
        fanned.extend(seqs)
        if not released:
            current = held_streams.read(store, stream, holder.consumer)
            if current is not None and not held_streams.release(store, current):
                continue  # held again meanwhile: fan out what it parked
            released = True
            time.sleep(held_streams.CACHE_SECONDS if settle is None else settle)
    done = ", ".join(map(str, sorted(set(fanned)))) or "none"
    return f"released: events {done} fanned out in order"


def replay(
    store: DocumentStore, letter: DeadLetter, send: Send, *, holder: Holder = WEBHOOKS
) -> str:
    """Replay one fan-out letter (the pages' and the API's replay). A letter of a stream
    held for ``holder``'s consumer releases the whole stream (:func:`release_stream`: alone
    it would be parked again); a letter whose stream is no longer held is fanned out once
    more, and holds the stream again if it fails."""
    marker = held_streams.read(store, letter.stream, holder.consumer)
    if marker is not None:
        return release_stream(store, marker, send, holder=holder)
    if not deadletters.remove(store, letter):
        return "already replayed"
    try:
        queued = holder.run(store, letter.stream, [letter.seq], send)
    except Exception as exc:  # noqa: BLE001 - failing again: lettered and held again
        record_failure(store, letter.stream, [letter.seq], exc, letter.attempts + 1,
                       holder=holder)
        return f"failed again ({type(exc).__name__})"
    return f"fanned out ({queued} delivery(ies))"
