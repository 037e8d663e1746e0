"""Celery tasks of the webhooks. Deliveries run on their own queue (``webhooks``): a slow or
dead receiver only ever occupies webhook workers, never the projections or the web.

``webhooks.fan_out`` gets every patient event from the relay (ids only) on the workers'
default queue (one read and one query, never a call out, so nothing piles up where no
webhook worker runs and nobody subscribed), and queues one ``webhooks.deliver`` per
subscription that wants it; ``webhooks.deliver`` runs the ordered drain
(:mod:`webhooks.delivery.drain`) and reschedules itself while a delivery backs off.
Both acknowledge late and are requeued when their worker dies: at least once.

A fan-out that fails for good (its retries spent) reached no subscription with its events:
the first is dead-lettered with its error (a ``fan-out`` letter) and the patient's stream
held for the webhooks (:mod:`hisadmin.core.held_streams`); while it is held, the patient's
later events are parked as letters, not fanned out. ``webhooks.replay`` of such a letter, or
``manage.py replay_dead_letters`` (through :func:`release_held`, registered for the webhooks'
holds), fans them out again in order and releases the stream (:mod:`webhooks.delivery.fanout`).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Task, shared_task

from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams
from hisadmin.core.consumers import seqs_of
from hisadmin.core.held_streams import HeldStream
from hisadmin.core.store import get_store
from webhooks.delivery import fanout, sender, sweeper
from webhooks.delivery.drain import Deliverer, Settings
from webhooks.persistence import deadletters, subscriptions, trackers

log = logging.getLogger(__name__)
QUEUE = "webhooks"
FAN_OUT_QUEUE = "celery"  # the workers' default queue, as patients.follow_up
FAN_OUT = "webhooks.fan_out"
DELIVER = "webhooks.deliver"
REPLAY = "webhooks.replay"


def settings() -> Settings:
    """Read per call so tests and operators can tune a worker through its environment."""
    return Settings(
        timeout=float(os.environ.get("WEBHOOK_TIMEOUT", "5")),
        max_attempts=int(os.environ.get("WEBHOOK_MAX_ATTEMPTS", "8")),
        backoff_base=float(os.environ.get("WEBHOOK_BACKOFF_BASE", "2")),
    )


def any_subscription_now() -> bool:
    """The relay's gate for the fan-out: is there a subscription at all?"""
    return subscriptions.any_subscription(get_store("relay"))


class FanOutTask(Task):
    """The fan-out's task class: its final failure letters the event and holds the stream."""

    def on_failure(
        self,
        exc: Exception,
        task_id: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        einfo: Any,
    ) -> None:
        """Called once the retries are spent (never on a retry): letter the message's first
        event with the error, hold the stream for the webhooks at it (the projections have
        their own holds) and park the message's other events behind it."""
        stream_pk = args[0] if args else kwargs.get("stream_pk")
        seq = args[1] if len(args) > 1 else kwargs.get("seq")
        if not stream_pk or seq is None:
            return
        attempts = int(getattr(self.request, "retries", None) or 0) + 1
        try:
            marker = fanout.record_failure(
                get_store("relay"), str(stream_pk), seqs_of(seq), exc, attempts
            )
        except Exception:  # noqa: BLE001 - the store is down too: the log is all that is left
            log.exception(
                "webhook fan-out %s#%s failed for good; could not hold the stream", stream_pk, seq
            )
            return
        log.error(
            "webhook fan-out %s#%s failed for good after %s attempts (%s); stream held at %s",
            stream_pk,
            seq,
            attempts,
            type(exc).__name__,
            marker.seq,
        )


@shared_task(
    base=FanOutTask,
    name=FAN_OUT,
    queue=FAN_OUT_QUEUE,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    max_retries=8,
)
def fan_out(stream_pk: str, seq: int | list[int]) -> str:
    """``seq``: the stream's events of one change-feed page (one number in older messages).
    The subscriptions are read first: with none, that one query is all an event costs.
    While the stream is held for the webhooks, its events from the held one on are parked
    (dead-lettered unattempted, in order) instead of fanned out."""
    store = get_store("relay")
    subs = subscriptions.all_subscriptions(store)
    if not subs:
        return "0 subscription(s)"
    seqs, marker = fanout.held_part(store, stream_pk, seqs_of(seq))
    if marker is not None and not seqs:
        return f"held at {marker.seq}: parked"
    queued = fanout.fan_out_events(store, stream_pk, seqs, queue_delivery, subs=subs)
    held = f"; held at {marker.seq}: the rest parked" if marker is not None else ""
    return f"{queued} delivery(ies){held}"


def queue_delivery(subscription_id: str, stream_pk: str, seq: int) -> None:
    """Queue one ``webhooks.deliver`` (the fan-out's ``send``)."""
    deliver.apply_async(args=[subscription_id, stream_pk, seq], queue=QUEUE)


# The delivery sweeper re-drives what the store says is owed to a subscription and no live
# task has (a worker killed, the broker restarted): the same queueing as the fan-out's.
sweeper.register(sweeper.Kind(name=trackers.SUBSCRIPTION, targets=subscriptions.all_subscriptions,
                              queue=queue_delivery, consumer=held_streams.WEBHOOKS))


def release_held(store: DocumentStore, marker: HeldStream) -> str:
    """Release a stream held for the webhooks: its fan-out letters fanned out again in
    sequence order, then the marker removed (registered with
    :func:`hisadmin.core.held_streams.register_releaser`; ``manage.py replay_dead_letters``
    calls it)."""
    return fanout.release_stream(store, marker, queue_delivery)


# The operators' commands release every consumer's holds without importing this app: this
# module is imported whenever the app is (webhooks.apps), so the registration always holds.
held_streams.register_releaser(held_streams.WEBHOOKS, release_held)


@shared_task(
    bind=True,
    name=DELIVER,
    queue=QUEUE,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    max_retries=None,
)
def deliver(self: Task, subscription_id: str, stream_pk: str, seq: int) -> str:
    """The task's id is the claim token: a redelivered or retried message keeps it, so it
    takes its own claim back at once."""
    drain = Deliverer(get_store("relay"), sender.post, settings())
    try:
        outcome = drain.run(subscription_id, stream_pk, int(seq), token=str(self.request.id))
    except Exception as exc:  # noqa: BLE001 - the store busy or down: never drop the event
        # Our claim (this task's id) stays ours, so the retry takes it back at once.
        log.warning(
            "webhook %s: %s#%s interrupted (%s); retrying",
            subscription_id,
            stream_pk,
            seq,
            type(exc).__name__,
        )
        raise self.retry(countdown=5.0, max_retries=None) from None
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in, max_retries=None)
    return f"{outcome.kind} ({outcome.delivered})"


@shared_task(
    name=REPLAY, queue=QUEUE, acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def replay(letter_id: str) -> str:
    """One more attempt for a dead letter; if it fails again the letter comes back. A
    fan-out letter of a held stream releases the stream: its letters fanned out in order."""
    store = get_store("relay")
    letter = deadletters.find(store, letter_id)
    if letter is None or letter.consumer != held_streams.WEBHOOKS:  # another fan-out's
        return "gone"
    if letter.kind == deadletters.FAN_OUT:
        return fanout.replay(store, letter, queue_delivery)
    drain = Deliverer(store, sender.post, settings())
    return drain.replay(letter)


def send_replay(letter_id: str) -> None:
    """Queue a dead letter's replay (what pages and the API hand to the use case)."""
    replay.apply_async(args=[letter_id], queue=QUEUE)
