"""Celery tasks: thin wrappers around the projector. Arguments are ids only, never PHI."""

from __future__ import annotations

import logging
import os

from celery import shared_task
from celery.exceptions import Retry

from cosmos_backend import errors
from hisadmin.store import get_store

from . import deadletters
from .projector import apply_event

log = logging.getLogger(__name__)
MAX_RETRIES = int(os.environ.get("PROJECTION_MAX_RETRIES", "5"))


@shared_task(bind=True, name="worklists.project_event", queue="projections", acks_late=True,
             reject_on_worker_lost=True, max_retries=MAX_RETRIES, ignore_result=True)
def project_event(self, stream_pk: str, seq: int, event_type: str = "") -> str:  # noqa: ANN001
    store = get_store("relay")
    try:
        return apply_event(store, stream_pk, seq)
    except Retry:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is retried, then dead-lettered
        attempts = self.request.retries + 1
        if self.request.retries >= self.max_retries:
            log.error("projection of %s#%s failed for good after %s attempts: %s",
                      stream_pk, seq, attempts, type(exc).__name__)
            deadletters.record(store, stream_pk=stream_pk, seq=seq, event_type=event_type,
                               reason=f"{type(exc).__name__}: {exc}", attempts=attempts)
            return "dead-lettered"
        transient = isinstance(exc, (errors.Throttled, errors.Unavailable))
        countdown = 0.05 * (2 ** self.request.retries) if not transient else 1.0
        raise self.retry(exc=exc, countdown=countdown) from exc
