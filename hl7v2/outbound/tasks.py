"""Celery tasks of ADT out, beside the webhooks' and on the same lanes.

``hl7v2.fan_out`` gets every patient event of the types sent as ADT from the relay (ids
only, while a destination exists) on the workers' default queue and queues one
``hl7v2.deliver`` per destination that wants it on the ``webhooks`` queue (every call out
runs there); ``hl7v2.deliver`` runs the webhooks' ordered drain with the MLLP transport,
and reschedules itself while a message backs off. ``hl7v2.replay`` sends a dead-lettered
message once more.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from hisadmin.core.consumers import register_consumer, seqs_of
from hisadmin.core.recent_events import read_event, read_events
from hisadmin.core.store import get_store
from hl7v2.outbound import store
from hl7v2.outbound.destinations import TRIGGERS
from hl7v2.outbound.transport import Hl7Transport
from webhooks.delivery.drain import Deliverer
from webhooks.delivery.tasks import settings as drain_settings

log = logging.getLogger(__name__)
QUEUE = "webhooks"  # calls out run on the webhooks' workers
FAN_OUT_QUEUE = "celery"
FAN_OUT = "hl7v2.fan_out"
DELIVER = "hl7v2.deliver"
REPLAY = "hl7v2.replay"


def any_destination_now() -> bool:
    """The relay's gate for the fan-out: is there a destination at all?"""
    return store.any_destination(get_store("relay"))


@shared_task(name=FAN_OUT, queue=FAN_OUT_QUEUE, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=8)
def fan_out(stream_pk: str, seq: int | list[int]) -> str:
    """One ``hl7v2.deliver`` per destination that wants each event, in sequence order."""
    store_ = get_store("relay")
    dests = store.all_destinations(store_)
    if not dests:
        return "0 destination(s)"
    seqs = seqs_of(seq)
    events = read_events(store_, stream_pk, seqs)
    queued = 0
    for one in seqs:
        event = events.get(one)
        if event is None:
            continue
        for dest in dests:
            if dest.wants(event["type"]):
                deliver.apply_async(args=[dest.id, stream_pk, one], queue=QUEUE)
                queued += 1
    return f"{queued} message(s)"


@shared_task(bind=True, name=DELIVER, queue=QUEUE, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def deliver(self: Task, destination_id: str, stream_pk: str, seq: int) -> str:
    """The task's id is the claim token, as for a webhook delivery."""
    drain = Deliverer(get_store("relay"), settings=drain_settings(), transport=Hl7Transport())
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


def register() -> None:
    """The relay sends the fan-out the events sent as ADT, while a destination exists (the
    app's ``ready``)."""
    register_consumer(FAN_OUT, queue=FAN_OUT_QUEUE, stream_prefix=keys.PATIENT,
                      event_types=[t.value for t in TRIGGERS], gate=any_destination_now)
