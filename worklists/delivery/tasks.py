"""Celery tasks: thin wrappers around the projector. Arguments are ids only, never PHI.

The task re-reads the event by id, so a task message carries nothing but a stream key and a
sequence number. Failures retry with a short backoff; after ``PROJECTION_MAX_RETRIES`` the
event goes to the dead letters (the relay's checkpoint has moved on: nothing else blocks).
"""

from __future__ import annotations

import logging
import os

from celery import Task, shared_task

from cosmos_backend import errors
from hisadmin.core.store import get_store
from worklists.delivery.deadletters import record_failure
from worklists.delivery.projector import project_event as project

log = logging.getLogger(__name__)
MAX_RETRIES = int(os.environ.get("PROJECTION_MAX_RETRIES", "5"))
TASK = "worklists.project_event"
QUEUE = "projections"


@shared_task(bind=True, name=TASK, queue=QUEUE, acks_late=True,
             reject_on_worker_lost=True, max_retries=MAX_RETRIES, ignore_result=True)
def project_event(self: Task, stream_pk: str, seq: int) -> str:
    store = get_store("relay")
    try:
        outcomes = project(store, stream_pk, int(seq))
    except Exception as exc:  # noqa: BLE001 - every failure is retried, then dead-lettered
        attempts = self.request.retries + 1
        if self.request.retries >= self.max_retries:
            log.error("projection %s#%s failed for good after %s attempts: %s",
                      stream_pk, seq, attempts, type(exc).__name__)
            record_failure(store, stream_pk, int(seq), exc, attempts)
            return "dead-lettered"
        transient = isinstance(exc, (errors.Throttled, errors.Unavailable))
        countdown = 1.0 if transient else 0.1 * (2 ** self.request.retries)
        raise self.retry(exc=exc, countdown=countdown) from None
    return ",".join(f"g{gen}:{outcome}" for gen, outcome in outcomes.items())


def enqueue(stream_pk: str, seq: int) -> None:
    """Queue event ``seq`` of ``stream_pk`` for the projections; raises when the broker does
    not accept it (the caller owns retrying: ``retry=False``)."""
    project_event.apply_async(args=[stream_pk, int(seq)], retry=False)
