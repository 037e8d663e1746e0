"""Celery tasks of ADT out, beside the webhooks' and on the same lanes.

``hl7v2.fan_out`` gets every patient event of the types sent as ADT from the relay (ids
only, while a destination exists) on the workers' default queue and queues one
``hl7v2.deliver`` per destination that wants it on the ``webhooks`` queue (every call out
runs there); ``hl7v2.deliver`` runs the webhooks' ordered drain with the MLLP transport,
and reschedules itself while a message backs off. ``hl7v2.replay`` sends a dead-lettered
message once more.

A fan-out that fails for good (its retries spent) reached no destination with its events,
as the webhooks' can (:mod:`webhooks.delivery.fanout`, which both share): its first event
gets a fan-out letter (id ``hl7-fan-out.<stream>.<seq>``, in the webhooks' dead-letter
partition under the consumer ``hl7``) and the patient's stream is held for HL7
(:data:`hisadmin.core.held_streams.HL7`); while it is held, the patient's later events are
parked as letters, not fanned out, so no engine gets them out of order. ``manage.py
replay_dead_letters`` (through :func:`release_held`, registered for the HL7 holds) fans
them out again in order and releases the stream. ``hl7_status`` and the message log page
list the letters and the holds.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from celery import Task, shared_task

from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams, keys
from hisadmin.core.consumers import register_consumer, seqs_of
from hisadmin.core.held_streams import HeldStream
from hisadmin.core.recent_events import read_event
from hisadmin.core.store import get_store
from hl7v2.outbound import mllp, profile
from hl7v2.outbound.destinations import TRIGGERS, Destination, control_id
from hl7v2.outbound.transport import Hl7Transport
from hl7v2.persistence import store
from patients.persistence.snapshots import read_snapshot
from webhooks.delivery import fanout, sweeper
from webhooks.delivery.drain import Deliverer, Settings
from webhooks.delivery.fanout import Send
from webhooks.delivery.tasks import settings as drain_settings
from webhooks.persistence import deadletters, trackers

log = logging.getLogger(__name__)
QUEUE = "webhooks"  # calls out run on the webhooks' workers
FAN_OUT_QUEUE = "celery"
FAN_OUT = "hl7v2.fan_out"
DELIVER = "hl7v2.deliver"
REPLAY = "hl7v2.replay"
FAN_OUT_PREFIX = "hl7-fan-out."  # the HL7 fan-out letters' ids (the webhooks' partition)
RETRY_BUDGET = 24 * 3600.0  # seconds a message is retried before its patient's stream is held
BACKOFF_CAP = 300.0  # the longest wait between two attempts (an engine back is found soon)


def settings() -> Settings:
    """The drain's settings for HL7 destinations (read per call, as the webhooks' are): the
    webhooks' timeout and backoff base; retries for ``HL7_RETRY_BUDGET`` seconds (24 h),
    every ``HL7_BACKOFF_CAP`` seconds (300) at most, then the stream held, never skipped."""
    base = drain_settings()
    return replace(base, max_attempts=10**9, retry_budget=float(
        os.environ.get("HL7_RETRY_BUDGET", str(RETRY_BUDGET))), backoff_cap=float(
        os.environ.get("HL7_BACKOFF_CAP", str(BACKOFF_CAP))), hold_when_spent=True)


def any_destination_now() -> bool:
    """The relay's gate for the fan-out: is there a destination at all?"""
    return store.any_destination(get_store("relay"))


def fan_out_events(store_: DocumentStore, stream_pk: str, seqs: Iterable[int], send: Send,
                   *, dests: list[Destination] | None = None) -> int:
    """Hand ``send`` one message per destination that wants each of events ``seqs``, in the
    order given; returns how many. ``dests``: the destinations, when already read. An event
    gone (its time to live passed) is skipped. Raises whatever reading raises."""
    dests = store.all_destinations(store_) if dests is None else dests
    return fanout.hand_out(store_, stream_pk, seqs, dests, send)


def _fan_out_again(store_: DocumentStore, stream_pk: str, seqs: list[int], send: Send) -> int:
    """The fan-out a release runs again (looked up when called: tests replace it)."""
    return fan_out_events(store_, stream_pk, seqs, send)


HOLDER = fanout.Holder(consumer=held_streams.HL7, prefix=FAN_OUT_PREFIX, fan_out=_fan_out_again)


class FanOutTask(Task):
    """The fan-out's task class: its final failure letters the event and holds the stream
    for HL7, as the webhooks' :class:`webhooks.delivery.tasks.FanOutTask` does for them."""

    def on_failure(self, exc: Exception, task_id: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], einfo: Any) -> None:
        """Called once the retries are spent (never on a retry): letter the message's first
        event with the error, hold the stream for HL7 at it and park the message's other
        events behind it."""
        stream_pk = args[0] if args else kwargs.get("stream_pk")
        seq = args[1] if len(args) > 1 else kwargs.get("seq")
        if not stream_pk or seq is None:
            return
        attempts = int(getattr(self.request, "retries", None) or 0) + 1
        try:
            marker = fanout.record_failure(get_store("relay"), str(stream_pk), seqs_of(seq),
                                           exc, attempts, holder=HOLDER)
        except Exception:  # noqa: BLE001 - the store is down too: the log is all that is left
            log.exception("hl7 fan-out %s#%s failed for good; could not hold the stream",
                          stream_pk, seq)
            return
        log.error("hl7 fan-out %s#%s failed for good after %s attempts (%s); stream held at %s",
                  stream_pk, seq, attempts, type(exc).__name__, marker.seq)


@shared_task(base=FanOutTask, name=FAN_OUT, queue=FAN_OUT_QUEUE, acks_late=True,
             reject_on_worker_lost=True, ignore_result=True, autoretry_for=(Exception,),
             retry_backoff=True, max_retries=8)
def fan_out(stream_pk: str, seq: int | list[int]) -> str:
    """One ``hl7v2.deliver`` per destination that wants each event, in sequence order. While
    the stream is held for HL7, its events from the held one on are parked (lettered
    unattempted, in order) instead of fanned out."""
    store_ = get_store("relay")
    dests = store.all_destinations(store_)
    if not dests:
        return "0 destination(s)"
    seqs, marker = fanout.held_part(store_, stream_pk, seqs_of(seq), holder=HOLDER)
    if marker is not None and not seqs:
        return f"held at {marker.seq}: parked"
    queued = fan_out_events(store_, stream_pk, seqs, _queue_and_note(store_), dests=dests)
    held = f"; held at {marker.seq}: the rest parked" if marker is not None else ""
    return f"{queued} message(s){held}"


def queue_delivery(destination_id: str, stream_pk: str, seq: int) -> None:
    """Queue one ``hl7v2.deliver`` (the fan-out's ``send``, the sweeper's re-drive)."""
    deliver.apply_async(args=[destination_id, stream_pk, seq], queue=QUEUE)


def note_pending(store_: DocumentStore, destination_id: str, stream_pk: str, seq: int, *,
                 mrns: dict[str, str] | None = None) -> None:
    """The message log's entry of a message handed out and not yet attempted (status
    ``pending``), unless it has one already: the log counts every message owed, not only
    the one being sent. ``mrns``: the MRNs already read, by stream (one fan-out's)."""
    event = read_event(store_, stream_pk, seq)
    if event is None:
        return
    mrns = {} if mrns is None else mrns
    if stream_pk not in mrns:
        snapshot = read_snapshot(store_, keys.suffix(stream_pk))
        mrns[stream_pk] = snapshot.patient.mrn if snapshot.patient is not None else ""
    mrn = mrns[stream_pk]
    store.log_pending(store_, store.LogEntry(
        control_id=control_id(destination_id, stream_pk, seq), destination_id=destination_id,
        stream=stream_pk, seq=seq, event_type=str(event["type"]),
        trigger=profile.trigger_of(str(event["type"])) or "", mrn=mrn, status="pending",
        attempts=0, reason="", at=store.now_iso()))


def _queue_and_note(store_: DocumentStore) -> Send:
    mrns: dict[str, str] = {}

    def send(destination_id: str, stream_pk: str, seq: int) -> None:
        note_pending(store_, destination_id, stream_pk, seq, mrns=mrns)
        queue_delivery(destination_id, stream_pk, seq)
    return send


def release_delivery_hold(store_: DocumentStore, marker: HeldStream) -> str:
    """Release a patient's stream held after a message's retry budget (consumer
    ``hl7-delivery``): every destination's tracker held on the stream starts again at its
    held message (in order: the later ones follow it), then the marker goes."""
    patient_id = keys.suffix(marker.stream)
    restarted = []
    for dest in store.all_destinations(store_):
        if unhold(store_, dest.id, patient_id):
            restarted.append(dest.name)
    if not held_streams.release(store_, marker):
        return "still held (held again meanwhile)"
    return f"released: {', '.join(restarted) or 'no destination'} sending again in order"


def unhold(store_: DocumentStore, destination_id: str, patient_id: str) -> bool:
    """Take a destination's tracker of a patient off hold and queue its held message; False
    when it was not held."""
    for _ in range(5):
        tracker = trackers.read(store_, destination_id, patient_id, kind=trackers.HL7_DESTINATION)
        if not tracker.held or tracker.failing_seq is None:
            return False
        try:
            trackers.save(store_, tracker.but(held=False, failing_attempts=0, failing_since=0.0,
                                              retry_at=0.0))
        except trackers.TrackerChanged:
            continue
        queue_delivery(destination_id, keys.patient(patient_id), tracker.failing_seq)
        return True
    return False


held_streams.register_releaser(held_streams.HL7_DELIVERY, release_delivery_hold)


def release_held(store_: DocumentStore, marker: HeldStream) -> str:
    """Release a stream held for HL7: its fan-out letters fanned out again in sequence
    order, then the marker removed (registered with
    :func:`hisadmin.core.held_streams.register_releaser`; ``manage.py replay_dead_letters``
    calls it)."""
    return fanout.release_stream(store_, marker, queue_delivery, holder=HOLDER)


def fan_out_letters(store_: DocumentStore) -> list[deadletters.DeadLetter]:
    """The HL7 fan-out letters (failed, or parked behind a held event), by stream and seq."""
    return deadletters.all_letters(store_, limit=10_000, consumer=held_streams.HL7)


# The operators' commands release every consumer's holds without importing this app: this
# module is imported whenever the app is (hl7v2.apps), so the registration always holds.
held_streams.register_releaser(held_streams.HL7, release_held)


@shared_task(bind=True, name=DELIVER, queue=QUEUE, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def deliver(self: Task, destination_id: str, stream_pk: str, seq: int) -> str:
    """The task's id is the claim token, as for a webhook delivery."""
    drain = Deliverer(get_store("relay"), settings=settings(), transport=Hl7Transport())
    try:
        outcome = drain.run(destination_id, stream_pk, int(seq), token=str(self.request.id))
    except Exception as exc:  # noqa: BLE001 - the store busy or down: never drop the event
        log.warning("hl7 %s: %s#%s interrupted (%s); retrying", destination_id, stream_pk, seq,
                    type(exc).__name__)
        raise self.retry(countdown=5.0, max_retries=None) from None
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in, max_retries=None)
    return f"{outcome.kind} ({outcome.delivered})"


def replay_now(store_: DocumentStore, control_id: str) -> str:
    """Send a dead-lettered message once more, out of order (the patient's later messages
    went on); it is dead again if this attempt fails too."""
    entry = store.find_entry(store_, control_id)
    if entry is None:
        return "gone"
    if entry.status != "dead":
        return "not dead-lettered"
    tracker = trackers.read(store_, entry.destination_id, keys.suffix(entry.stream),
                            kind=trackers.HL7_DESTINATION)
    if tracker.held and tracker.failing_seq == entry.seq:
        # the patient's stream waits at this message: send it, then the rest, in order
        marker = held_streams.read(store_, entry.stream, held_streams.HL7_DELIVERY)
        if marker is not None:
            return release_delivery_hold(store_, marker)
        return "released" if unhold(store_, entry.destination_id,
                                    keys.suffix(entry.stream)) else "not held"
    transport = Hl7Transport()
    dest = transport.find(store_, entry.destination_id)
    event = read_event(store_, entry.stream, entry.seq)
    if dest is None or event is None:
        return "gone"
    failure = transport.send(store_, dest, entry.stream, event)
    if failure is None:
        return "accepted"
    transport.dead_letter(store_, dest, stream=entry.stream, seq=entry.seq,
                          event_type=entry.event_type, reason=failure, attempts=entry.attempts)
    return "failed again"


@shared_task(name=REPLAY, queue=QUEUE, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True)
def replay(control_id: str) -> str:
    return replay_now(get_store("relay"), control_id)


def send_replay(control_id: str) -> None:
    """Queue a dead letter's replay (what pages and the API hand to the use case)."""
    replay.apply_async(args=[control_id], queue=QUEUE)


def _destinations(store_: DocumentStore) -> list[Destination]:
    return store.all_destinations(store_)


# The delivery sweeper re-drives what the store says is owed to a destination and no live
# task has (a worker killed, the broker restarted): the same queueing as the fan-out's.
def engine_back(store_: DocumentStore, dest: Destination, stream_pk: str, seq: int) -> bool:
    """The sweeper's ``wake``: a message backing off because the engine could not be
    reached (no connection, not an ACK) is tried now once the engine accepts a connection
    again, instead of at its next retry minutes later."""
    entry = store.find_entry(store_, control_id(dest.id, stream_pk, seq))
    if entry is None or not entry.reason or "ACK" in entry.reason:
        return False  # refused or unanswered by a reachable engine: the backoff stands
    return mllp.reachable(dest.host, dest.port)


sweeper.register(sweeper.Kind(name=trackers.HL7_DESTINATION, targets=_destinations,
                              queue=queue_delivery, consumer=held_streams.HL7,
                              wake=engine_back))


def register() -> None:
    """The relay sends the fan-out the events sent as ADT, while a destination exists (the
    app's ``ready``)."""
    register_consumer(FAN_OUT, queue=FAN_OUT_QUEUE, stream_prefix=keys.PATIENT,
                      event_types=[t.value for t in TRIGGERS], gate=any_destination_now)
