"""Celery tasks of the patient record: thin adapters fed by the relay with ids only.

``patients.follow_up`` runs after commands whose effects reach past the patient's own
partition: the bed a discharge or transfer left goes to cleaning, a change of the
patient's demographics or allergies reaches their bed card, a merge of two records
that stopped between its steps is run on to its end, and a registration or a correction
is compared with the patients born the same day (possible duplicates). It re-reads the
event by id, so
the message carries nothing but a stream key and a sequence number (never a name or an
allergy), and it is idempotent: redelivery (acks late) does no harm. The relay sends a
change-feed page's follow-ups as one message (``patients.follow_up_page``): under load a
message per registration, admission and discharge was most of what the worker's Celery
handled (docs/performance.md).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from celery import Task, current_app, shared_task

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import failpoints, keys, views_lag
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.consumers import seqs_of
from hisadmin.core.store import get_store
from patients.domain.events import EventType
from patients.persistence import queries
from patients.use_cases.beds import (
    OCCUPANT_EVENTS,
    RefreshOccupant,
    bed_left,
    refresh_occupant,
    set_bed_to_cleaning,
)
from patients.use_cases.duplicates import (
    DUPLICATE_EVENTS,
    NotePossibleDuplicates,
    note_possible_duplicates,
)
from patients.use_cases.merges import MERGE_STEPS, ResumeMerge, resume_merge

log = logging.getLogger(__name__)


def _merge_met(data: dict) -> str:
    """A merge (or its undo) that has steps still to run is run on to its end here, at
    once: the process running it may have been killed between two steps, and a saga run
    twice at the same time is still applied once (every step is etag-checked and reads
    what is left to do first)."""
    state = resume_merge(ResumeMerge(str(data["retiredId"]), str(data["mergeId"]),
                                     stale_after=timedelta(0)),
                         UnitOfWork(get_store("relay")), actor=SYSTEM_ACTOR)
    return f"merge {state}"


# Both tasks: acknowledged once done, put back on the queue when the process running them
# dies (a follow-up page carries many patients' follow-ups: none may be lost with it),
# retried with a backoff on any error (every follow-up is idempotent).
RETRIED: dict[str, Any] = {"acks_late": True, "reject_on_worker_lost": True,
                           "ignore_result": True, "autoretry_for": (Exception,),
                           "retry_backoff": True, "max_retries": 8}


FOLLOW_UP_TASK = "patients.follow_up"


class _SentOnAlone(Task):
    """A follow-up sent on alone from its page carries the page's marks: the relay keeps it
    unfinished (``views_lag.handing_on``) until it is handled, and sends it again if the
    worker holding it is lost. A retry moves the note to when the retry is due (Celery's
    backoff: at most ``2 ** retries`` seconds, full jitter), so a message merely waiting
    for its retry is not sent again; given up after its retries, it is taken off (the
    failure is logged), as a message handled."""

    def on_retry(self, exc: BaseException, task_id: str, args: Any, kwargs: Any,
                 einfo: Any) -> None:
        marks = _marks_of(args, kwargs)
        if marks:
            due = time.time() + min(getattr(self, "retry_backoff_max", 600),
                                  2 ** (self.request.retries or 0))
            views_lag.handing_on(marks, FOLLOW_UP_TASK, _queue(), list(args),
                                 label=str(args[0]), at=due)

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any,
                   einfo: Any) -> None:
        marks = _marks_of(args, kwargs)
        if marks:
            log.error("follow-up of %s given up after its retries (%s)", args[0],
                      type(exc).__name__)
            views_lag.handed_on(marks, FOLLOW_UP_TASK, label=str(args[0]))


def _marks_of(args: Any, kwargs: Any) -> Any:
    return args[2] if len(args) > 2 else (kwargs or {}).get("marks")


def _queue() -> str:
    return str(current_app.conf.task_default_queue)


@shared_task(name=FOLLOW_UP_TASK, base=_SentOnAlone, **RETRIED)
def follow_up(stream_pk: str, seq: int | list[int], marks: Any = None) -> str:
    """``seq``: the stream's bed events of one change-feed page, in order (one number in
    older messages); each is followed up in turn. ``marks``: its page's, when it was sent on
    alone from the page (``follow_up_page``); handled, it is taken off the unfinished."""
    failpoints.hit("follow_up")  # a fault test's worker killed holding it
    done = "; ".join(_follow_up(stream_pk, one) for one in seqs_of(seq))
    if marks:
        views_lag.handed_on(marks, FOLLOW_UP_TASK, label=stream_pk)
    return done


def _follow_up(stream_pk: str, seq: int) -> str:
    store = get_store("relay")
    event = queries.event(store, stream_pk, int(seq))
    if event is None:
        return "gone"  # expired: a late hold is set to cleaning by the next admission anyway
    done = []
    if event["type"] in DUPLICATE_EVENTS:
        before = (event.get("data") or {}).get("previous") or None
        noted = note_possible_duplicates(NotePossibleDuplicates(
            keys.suffix(stream_pk), before), UnitOfWork(store), actor=SYSTEM_ACTOR)
        if noted:
            done.append(f"{noted} possible duplicates noted")
    rest = _beds_and_merges(store, stream_pk, event)
    return "; ".join(done) if done and rest == "nothing to do" else "; ".join([*done, rest])


def _beds_and_merges(store: DocumentStore, stream_pk: str, event: dict[str, Any]) -> str:
    left = bed_left(event["type"], event.get("data") or {})
    if left is not None:
        set_bed_to_cleaning(left, UnitOfWork(store), actor=SYSTEM_ACTOR)
        if event["type"] != EventType.PATIENT_TRANSFERRED:
            return "bed set to cleaning"
        # The new bed's card takes the NEWS2 badge here, off the transfer's request path.
        changed = refresh_occupant(RefreshOccupant(keys.suffix(stream_pk)), UnitOfWork(store),
                                   actor=SYSTEM_ACTOR)
        return "bed set to cleaning" + ("; new bed's card refreshed" if changed else "")
    if event["type"] in MERGE_STEPS:
        return _merge_met(event.get("data") or {})
    if event["type"] in OCCUPANT_EVENTS:
        changed = refresh_occupant(
            RefreshOccupant(keys.suffix(stream_pk)), UnitOfWork(store), actor=SYSTEM_ACTOR
        )
        return "bed card refreshed" if changed else "nothing to do"
    return "nothing to do"


PAGE_TASK = "patients.follow_up_page"


@shared_task(name=PAGE_TASK, **RETRIED)
def follow_up_page(streams: list[list[Any]], marks: Any = None) -> str:
    """A change-feed page's follow-ups in one message (``streams``: ``[[stream_pk, [seq, …]],
    …]``, as the relay groups them; ``marks``: the page's key, taken off the relay's
    unfinished pages once the page is handled, hisadmin.core.views_lag): each stream's in
    turn. One that fails is sent on alone as a :func:`follow_up` message of its own, which
    retries it with its backoff, so the rest of the page is neither held up nor redone for it;
    only the broker refusing that message fails (and retries) the page, and every follow-up is
    idempotent."""
    failed = []
    for stream_pk, seq in streams:
        try:
            failpoints.hit("follow_up_in_page")
            follow_up(stream_pk, seq)
        except Exception as exc:  # noqa: BLE001 - sent on alone below, never dropped
            log.warning("follow-up of %s failed in its page (%s); sent on alone", stream_pk,
                        type(exc).__name__)
            failed.append((stream_pk, seqs_of(seq)))
    for stream_pk, seqs in failed:
        args = [stream_pk, seqs, marks]
        # Noted before it is sent (a worker may handle it at once): if it is lost with its
        # worker, the relay sends it again as it does the page's own messages.
        views_lag.handing_on(marks, FOLLOW_UP_TASK, _queue(), args, label=stream_pk)
        follow_up.apply_async(args=args, retry=False)
    # Handled (the failed ones handed on): the relay need not send this page again.
    views_lag.page_done(PAGE_TASK, marks)
    return f"{len(streams)} streams, {len(failed)} sent on alone"
