"""Celery tasks: thin wrappers around the projector. Arguments are ids only, never PHI.

The task re-reads the events by id, so a task message carries nothing but stream keys and
sequence numbers. The relay sends a change-feed page as one message (:func:`project_page`):
every patient stream of the page with its events in order, applied in one write transaction
of the views (the views' write lock taken once per page, not once per row partition and
tracker of every patient). A stream whose projection fails in the page is undone alone and
goes on as a message of its own (:func:`project_event`, also what replays send and what
messages from before pages carried; a single number is one event). Failures retry with a short
backoff; after ``PROJECTION_MAX_RETRIES`` the events go to the dead letters, one letter each
(the relay's checkpoint has moved on: nothing else blocks), and the patient's stream is held:
its later events are parked in the dead letters unprojected until the stream is released
(:mod:`worklists.delivery.deadletters`), so the views never skip past a failure silently.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from hisadmin.core import failpoints, views_lag
from hisadmin.core.consumers import seqs_of
from hisadmin.core.store import get_store
from worklists.delivery.deadletters import held_part, park, record_failure
from worklists.delivery.projector import project_events as project
from worklists.persistence.writer import forget_recent, page_writes

log = logging.getLogger(__name__)
MAX_RETRIES = int(os.environ.get("PROJECTION_MAX_RETRIES", "5"))
TASK = "worklists.project_event"
PAGE_TASK = "worklists.project_page"
QUEUE = "projections"


@shared_task(bind=True, name=PAGE_TASK, queue=QUEUE, acks_late=True,
             reject_on_worker_lost=True, max_retries=MAX_RETRIES, ignore_result=True)
def project_page(self: Task, streams: list[list[Any]], mark: views_lag.Marks = None) -> str:
    """Apply a change-feed page: ``streams`` is ``[[stream_pk, [seq, …]], …]``; ``mark``
    (``[{"range", "position"}, …]`` from the relay, a page of each range it read; one dict
    in messages of earlier releases) is published as projected once the page's views are
    committed, which is how the relay measures the views' lag."""
    failpoints.hit("page_message")  # a fault test's worker slow to take the page up
    try:
        return project_page_here(streams, mark)
    except Exception as exc:  # noqa: BLE001 - the page's commit (or a broker): retried whole
        transient = isinstance(exc, (errors.Throttled, errors.Unavailable))
        raise self.retry(exc=exc, countdown=1.0 if transient else
                         0.1 * (2 ** self.request.retries)) from None


def project_page_here(streams: list[list[Any]], mark: views_lag.Marks = None) -> str:
    """:func:`project_page`'s work, in the calling thread: the task runs it, and so does the
    relay inside a worker whose tasks run in its own process, with no message
    (``RELAY_APPLIES_PAGES``). Raises when the page could not be applied (marking it
    projected is advisory and never does): the task then retries, the relay sends it as a
    message."""
    outcome = apply_page(get_store("relay"), streams)
    mark_pages(mark)
    return outcome


def mark_pages(marks: views_lag.Marks) -> None:
    """Publish each range's position of a page as projected, and the page as no longer
    pending (see :func:`project_page`)."""
    views_lag.page_projected(marks, PAGE_TASK)


def apply_page(store: DocumentStore, streams: list[list[Any]],
               alone: Callable[[str, list[int]], None] | None = None) -> str:
    """Project every stream of a page under one grouped write (``store.grouped()``), each
    stream in a savepoint of its own, the rows and trackers of all of them written together
    at the end (a view partition's or tracker bucket's in one batch,
    :func:`~worklists.persistence.writer.page_writes`): one that fails is undone alone and
    handed to ``alone``
    (default: its own :func:`project_event` message, which retries it, then dead-letters it
    and holds the stream, as ever). Idempotent: a page applied again changes nothing."""
    failed: list[tuple[str, list[int]]] = []
    applied = 0
    with store.grouped(), page_writes(store) as page:
        for stream_pk, seq in streams:
            seqs = seqs_of(seq)
            try:
                # a savepoint: this stream's writes undone alone, its held writes dropped
                with store.grouped(), page.stream((stream_pk, seqs)):
                    todo, _ = held_part(store, stream_pk, seqs)
                    if todo:
                        project(store, stream_pk, todo)
                        applied += len(todo)
            except Exception as exc:  # noqa: BLE001 - handed on below, never dropped
                forget_recent()  # kept trackers may name versions the savepoint undid
                log.warning("projection %s failed in its page (%s); sent on alone",
                            stream_pk, type(exc).__name__)
                failed.append((stream_pk, seqs))
    for stream_pk, seqs in page.failed:  # its rows' or tracker's batch, then its redo
        log.warning("projection %s failed in its page's writes; sent on alone", stream_pk)
        failed.append((stream_pk, seqs))
    for stream_pk, seqs in failed:
        (alone or enqueue)(stream_pk, seqs)
    return f"{len(streams)} streams, {applied} events, {len(failed)} sent on alone"


@shared_task(bind=True, name=TASK, queue=QUEUE, acks_late=True,
             reject_on_worker_lost=True, max_retries=MAX_RETRIES, ignore_result=True)
def project_event(self: Task, stream_pk: str, seq: int | list[int]) -> str:
    store = get_store("relay")
    seqs, marker = held_part(store, stream_pk, seqs_of(seq))
    if not seqs:
        return f"held at {marker.seq if marker else '?'}: parked"
    try:
        with store.grouped():  # the stream's rows and tracker: one write of the views
            outcomes = project(store, stream_pk, seqs)
    except Exception as exc:  # noqa: BLE001 - every failure is retried, then dead-lettered
        forget_recent()  # kept trackers may name versions the rollback undid
        attempts = self.request.retries + 1
        if self.request.retries >= self.max_retries:
            return _one_by_one(store, stream_pk, seqs, exc, attempts)
        transient = isinstance(exc, (errors.Throttled, errors.Unavailable))
        countdown = 1.0 if transient else 0.1 * (2 ** self.request.retries)
        raise self.retry(exc=exc, countdown=countdown) from None
    return ",".join(f"g{gen}:{outcome}" for gen, outcome in outcomes.items())


def _one_by_one(store: DocumentStore, stream_pk: str, seqs: list[int], exc: Exception,
                attempts: int) -> str:
    """The last attempt: each event alone, in order, until one fails: that one is
    dead-lettered and its stream held, and the events after it are parked behind it."""
    for i, one in enumerate(seqs):
        try:
            if len(seqs) == 1:
                raise exc
            project(store, stream_pk, [one])
        except Exception as failure:  # noqa: BLE001 - recorded, never dropped
            log.error("projection %s#%s failed for good after %s attempts: %s; stream held",
                      stream_pk, one, attempts, type(failure).__name__)
            marker = record_failure(store, stream_pk, one, failure, attempts)
            parked = park(store, stream_pk, seqs[i + 1:], marker)
            return f"dead-lettered 1 of {len(seqs)}, held, {parked} parked"
    return f"dead-lettered 0 of {len(seqs)}"


def enqueue(stream_pk: str, seqs: int | list[int]) -> None:
    """Queue events ``seqs`` of ``stream_pk`` for the projections; raises when the broker does
    not accept them (the caller owns retrying: ``retry=False``)."""
    project_event.apply_async(args=[stream_pk, seqs_of(seqs)], retry=False)
