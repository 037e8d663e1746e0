"""Merging a duplicate registration into the surviving record, and undoing it: a saga.

The two records are two partitions, and a batch commits in one partition only, so a merge
is a sequence of steps, each ONE atomic, etag-checked batch in one partition carrying its
events (docs/patients.md, "Merging duplicate records"):

1. *lock* (retired partition): the retired record is marked "merging into" the survivor and
   the saga document is created beside it — ``PatientMergeStarted``;
2. *copy*, one part at a time (survivor partition): the retired record's stays, orders,
   observation sets and handover notes are copied into the survivor, the first part with its
   allergies — ``PatientRecordsMerged`` naming the source; the receipt counts the parts;
3. *bed*: a bed held by a stay that moved now names the survivor (a conditional write);
4. *finish* (retired partition): the retired record is "merged into" the survivor, the saga
   ``merged`` — ``PatientMerged``.

Undoing (within a day), or rolling back a merge the survivor no longer allows, runs the other
way: *lock* (``PatientUnmergeStarted``), per part *return* the survivor's current copies to
the retired record (``PatientRecordsReturned``) and *take back* the copies from the survivor
(``PatientRecordsUnmerged``, guarded by the versions returned), *bed*, and *finish*
(``PatientUnmerged`` or ``PatientMergeRolledBack``).

Each step reads the saga first and does only what is still to do, so running the saga again
from any point — the relay meeting a step's event (``patients.follow_up``), a merge command
meeting the locked record, ``manage.py merges --resume`` — finishes it exactly once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain import merges as rules
from patients.domain.beds import Occupant
from patients.domain.errors import DomainError, InvalidInput
from patients.domain.events import EventType, MergeEvent
from patients.domain.merges import LockState, SagaState
from patients.persistence import beds
from patients.persistence import merges as store_of
from patients.persistence.repository import PatientRecord, PatientRecords

# The steps' events after which a saga may still have steps to run (the relay's
# ``patients.follow_up`` resumes it when it stopped there).
MERGE_STEPS = (EventType.PATIENT_MERGE_STARTED, EventType.PATIENT_RECORDS_MERGED,
               EventType.PATIENT_UNMERGE_STARTED, EventType.PATIENT_RECORDS_RETURNED,
               EventType.PATIENT_RECORDS_UNMERGED)
STALE_AFTER = timedelta(seconds=10)  # a saga untouched this long is resumed by whoever meets it
MAX_STEPS = 400  # one run never loops for ever (a step that cannot move on raises instead)


@dataclass(frozen=True)
class MergePatients:
    survivor_id: str
    retired_id: str
    reason: str
    survivor_version: str | None = None  # the survivor's ETag (StaleWrite if changed)
    retired_version: str | None = None  # the retired record's ETag


@dataclass(frozen=True)
class UnmergePatients:
    survivor_id: str
    merge_id: str
    reason: str


@dataclass(frozen=True)
class ResumeMerge:
    retired_id: str
    merge_id: str
    # Resume only a saga whose last step is at least this old (one that moved more recently
    # is presumably being run by the command that started it); None: STALE_AFTER.
    stale_after: timedelta | None = None


class UnknownMerge(DomainError):
    http_status = 404
    title = "Unknown merge"


def _checkpoint(step: str) -> None:
    """Called after each step's batch committed (tests stop a saga here, as a killed
    process would)."""


def _actor(saga: dict[str, Any]) -> Actor:
    who = saga.get("undoActor") if saga.get("state") == SagaState.UNMERGING else None
    who = who or saga.get("actor") or {}
    return Actor(id=str(who.get("id", "system")), username=str(who.get("username", "system")),
                 display_name=str(who.get("display_name", "")),
                 roles=tuple(who.get("roles") or ()))


def _event(step: EventType, saga: dict[str, Any], **more: Any) -> MergeEvent:
    reason = saga.get("undoReason") if saga.get("state") == SagaState.UNMERGING else None
    return MergeEvent(step=step, merge_id=saga["mergeId"], survivor_id=saga["survivorId"],
                      survivor_mrn=saga["survivorMrn"], retired_id=saga["retiredId"],
                      retired_mrn=saga["retiredMrn"], reason=reason or saga["reason"], **more)


# ------------------------------------------------------------------ the commands
def merge_patients(cmd: MergePatients, uow: UnitOfWork, *, actor: Actor) -> str:
    """Merge ``retired_id`` into ``survivor_id`` and run the saga to its end; returns the
    merge's id. Refused (nothing written) with InvalidInput (the same record twice, no
    reason), MergeRefused (already merged, both admitted, allergy statuses contradict),
    PatientMerged (the survivor is itself merged), StaleWrite (either record changed since
    the version given). A merge the survivor stops allowing while it runs (admitted
    meanwhile) is rolled back: the saga ends ``rolled_back``."""
    reason = rules.clean_reason(cmd.reason)
    if cmd.survivor_id == cmd.retired_id:
        raise InvalidInput("Choose two different records: a record cannot be merged "
                                 "into itself.", field="retired_id")
    store = uow.store
    records = PatientRecords(uow)
    retired = records.load(cmd.retired_id, merged=True)
    if _settle(store, retired):  # a stale merge of it met on the way: finished first
        return merge_patients(cmd, UnitOfWork(store), actor=actor)
    survivor = records.load(cmd.survivor_id)
    records.expect(survivor, survivor.patient, cmd.survivor_version)
    records.expect(retired, retired.patient, cmd.retired_version)
    rules.check_merge(survivor.patient, survivor.admission, retired.patient, retired.admission)
    now = datetime.now(UTC)
    merge_id = str(uuid.uuid4())
    ids = store_of.history_ids(store, cmd.retired_id)
    saga = {"mergeId": merge_id, "survivorId": cmd.survivor_id,
            "survivorMrn": survivor.patient.mrn, "retiredId": cmd.retired_id,
            "retiredMrn": retired.patient.mrn, "reason": reason, "state": SagaState.MERGING,
            "startedAt": now.isoformat(), "updatedAt": now.isoformat(), "mergedAt": None,
            "actor": actor.as_dict(), "docIds": ids, "parts": len(store_of.parts_of(ids))}
    retired.patient.merged_into = {"mergeId": merge_id, "survivorId": cmd.survivor_id,
                                   "survivorMrn": survivor.patient.mrn,
                                   "state": LockState.MERGING}
    uow.add(store_of.new_saga(cmd.retired_id, saga))
    records.save(retired, [_event(EventType.PATIENT_MERGE_STARTED, saga)], actor=actor,
                 now=now)
    _checkpoint("lock")
    run_saga(store, cmd.retired_id, merge_id)
    return merge_id


def unmerge_patients(cmd: UnmergePatients, uow: UnitOfWork, *, actor: Actor) -> None:
    """Undo a finished merge into ``survivor_id`` within a day, with a reason: the retired
    record gets its history back (as it is now: a dose given on a moved order goes with it)
    and takes commands again; what the survivor gained from it is taken back. Orders,
    allergies and notes recorded on the survivor after the merge stay with the survivor."""
    reason = rules.clean_reason(cmd.reason)
    store = uow.store
    receipt = store_of.load_receipt(uow, cmd.survivor_id, cmd.merge_id)
    if receipt is None:
        raise UnknownMerge(f"No merge {cmd.merge_id} into this record.")
    retired_id = receipt["retiredId"]
    records = PatientRecords(uow)
    retired = records.load(retired_id, merged=True)
    if _settle(store, retired):
        return unmerge_patients(cmd, UnitOfWork(store), actor=actor)
    saga = store_of.load_saga(uow, retired_id, cmd.merge_id)
    if saga is None:
        raise UnknownMerge(f"No merge {cmd.merge_id} into this record.")
    now = datetime.now(UTC)
    rules.check_undo(saga, now)
    saga.update(state=SagaState.UNMERGING, undo="unmerge", undoReason=reason,
                undoActor=actor.as_dict(), undoStartedAt=now.isoformat(),
                updatedAt=now.isoformat(), returnedParts=0, returned={})
    retired.patient.merged_into = {**(retired.patient.merged_into or {}),
                                   "state": LockState.UNMERGING}
    store_of.stage_saga(uow, retired_id, saga)
    records.save(retired, [_event(EventType.PATIENT_UNMERGE_STARTED, saga)], actor=actor,
                 now=now)
    _checkpoint("unlock")
    run_saga(store, retired_id, cmd.merge_id)


def resume_merge(cmd: ResumeMerge, uow: UnitOfWork, *, actor: Actor) -> str:
    """Run a merge (or its undo) that stopped part way on to its end, if its last step is
    older than ``stale_after``; returns its state then (``merging``/``unmerging``: still
    running elsewhere, left alone)."""
    saga = store_of.load_saga(uow, cmd.retired_id, cmd.merge_id)
    if saga is None:
        raise UnknownMerge(f"No merge {cmd.merge_id} of this record.")
    if saga["state"] not in rules.IN_PROGRESS:
        return str(saga["state"])
    wait = STALE_AFTER if cmd.stale_after is None else cmd.stale_after
    if _last_moved(uow, saga) > datetime.now(UTC) - wait:
        return str(saga["state"])
    return str(run_saga(uow.store, cmd.retired_id, cmd.merge_id)["state"])


def _last_moved(uow: UnitOfWork, saga: dict[str, Any]) -> datetime:
    receipt = store_of.load_receipt(uow, saga["survivorId"], saga["mergeId"]) or {}
    return max(datetime.fromisoformat(t) for t in (saga["updatedAt"],
                                                   receipt.get("updatedAt") or saga["updatedAt"]))


def _settle(store: Any, retired: PatientRecord) -> bool:
    """A record locked by a merge that stopped part way (its last step older than
    :data:`STALE_AFTER`) has that merge run on to its end; True if one was."""
    lock = retired.patient.merged_into
    if not lock or lock.get("state") == LockState.MERGED:
        return False
    state = resume_merge(ResumeMerge(retired.patient_id, str(lock["mergeId"])),
                         UnitOfWork(store), actor=Actor(id="system", username="system"))
    return state not in rules.IN_PROGRESS


# ------------------------------------------------------------------ the saga
def run_saga(store: Any, retired_id: str, merge_id: str,
             checkpoint: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Take the saga step by step to its end (merged, rolled back or unmerged); returns the
    saga. A step that meets a concurrent change (StaleWrite) is read again and retried."""
    for _ in range(MAX_STEPS):
        uow = UnitOfWork(store)
        saga = store_of.load_saga(uow, retired_id, merge_id)
        if saga is None:
            raise UnknownMerge(f"No merge {merge_id} of this record.")
        if saga["state"] not in rules.IN_PROGRESS:
            return saga
        try:
            step = (_merge_step if saga["state"] == SagaState.MERGING else _undo_step)(
                uow, saga)
        except StaleWrite:
            continue  # someone else moved one of the partitions: read again
        (checkpoint or _checkpoint)(step)
    raise RuntimeError(f"merge {merge_id} did not finish in {MAX_STEPS} steps")


def _merge_step(uow: UnitOfWork, saga: dict[str, Any]) -> str:
    store, now = uow.store, datetime.now(UTC)
    receipt = store_of.load_receipt(uow, saga["survivorId"], saga["mergeId"])
    done = int((receipt or {}).get("partsDone", 0))
    if done < int(saga["parts"]):
        return _copy_part(uow, saga, receipt, done, now)
    _move_bed(store, saga["survivorId"], saga)
    records = PatientRecords(uow)
    retired = records.load(saga["retiredId"], merged=True)
    retired.patient.merged_into = {**(retired.patient.merged_into or {}),
                                   "state": LockState.MERGED}
    saga.update(state=SagaState.MERGED, mergedAt=now.isoformat(), updatedAt=now.isoformat())
    store_of.stage_saga(uow, saga["retiredId"], saga)
    records.save(retired, [_event(EventType.PATIENT_MERGED, saga)], actor=_actor(saga),
                 now=now)
    return "finish"


def _copy_part(uow: UnitOfWork, saga: dict[str, Any], receipt: dict[str, Any] | None,
               done: int, now: datetime) -> str:
    """Copy part ``done`` of the retired record's history into the survivor (the first with
    the allergies and the observations' summary), in one batch in the survivor's partition;
    a survivor that no longer allows the merge turns the saga into its rollback."""
    records = PatientRecords(uow)
    survivor = records.load(saga["survivorId"], merged=True)
    retired = records.load(saga["retiredId"], merged=True)
    try:
        rules.refuse_commands(survivor.patient)
        own_stay = survivor.admission  # not the retired record's stay copied in already
        if own_stay is not None and retired.admission is not None and (
                own_stay.admission_id == retired.admission.admission_id):
            own_stay = None
        rules.check_pair(survivor.patient, own_stay, retired.patient, retired.admission)
    except DomainError as exc:
        _begin_undo(UnitOfWork(uow.store), saga, undo="rollback", reason=str(exc),
                    actor=saga["actor"], now=now)
        return "rollback"
    part = store_of.parts_of(saga["docIds"])[done]
    copied: dict[str, list[str]] = {"allergies": [], **store_of.copy_part(uow, saga, part)}
    summary_before: Any = (receipt or {}).get("summaryBefore")
    if done == 0:
        copied["allergies"] = rules.merge_allergies(survivor.patient, retired.patient,
                                                    merge_id=saga["mergeId"], now=now)
        summary_before = store_of.merge_summary(uow, saga)
    previous = (receipt or {}).get("copies", [])
    new_ids = [i for kind, ids in copied.items() if kind != "allergies" for i in ids]
    store_of.stage_receipt(uow, saga["survivorId"], {
        "mergeId": saga["mergeId"], "retiredId": saga["retiredId"],
        "retiredMrn": saga["retiredMrn"], "partsDone": done + 1, "parts": saga["parts"],
        "copies": [*previous, *new_ids],
        "allergies": copied["allergies"] if done == 0 else (receipt or {}).get("allergies", []),
        "summaryBefore": summary_before, "state": "merged", "updatedAt": now.isoformat()},
        exists=receipt is not None)
    records.save(survivor, [_event(EventType.PATIENT_RECORDS_MERGED, saga, copied=copied,
                                   part=done + 1, parts=int(saga["parts"]))],
                 actor=_actor(saga), now=now)
    return f"copy {done + 1}/{saga['parts']}"


def _begin_undo(uow: UnitOfWork, saga: dict[str, Any], *, undo: str, reason: str,
                actor: dict[str, Any], now: datetime) -> None:
    records = PatientRecords(uow)
    retired = records.load(saga["retiredId"], merged=True)
    saga = store_of.load_saga(uow, saga["retiredId"], saga["mergeId"]) or saga
    if saga["state"] != SagaState.MERGING:
        return
    saga.update(state=SagaState.UNMERGING, undo=undo, undoReason=reason, undoActor=actor,
                undoStartedAt=now.isoformat(), updatedAt=now.isoformat(), returnedParts=0,
                returned={})
    retired.patient.merged_into = {**(retired.patient.merged_into or {}),
                                   "state": LockState.UNMERGING}
    store_of.stage_saga(uow, saga["retiredId"], saga)
    records.save(retired, [_event(EventType.PATIENT_UNMERGE_STARTED, saga)],
                 actor=_actor(saga), now=now)


def _undo_step(uow: UnitOfWork, saga: dict[str, Any]) -> str:
    store, now = uow.store, datetime.now(UTC)
    receipt = store_of.load_receipt(uow, saga["survivorId"], saga["mergeId"])
    parts = store_of.parts_of((receipt or {}).get("copies", []))
    removed = int((receipt or {}).get("removedParts", 0))
    if receipt is not None and receipt.get("state") != "undone":
        if int(saga.get("returnedParts", 0)) <= removed:
            return _return_part(uow, saga, parts, removed, now)
        return _take_back_part(uow, saga, receipt, parts, removed, now)
    _move_bed(store, saga["retiredId"], saga)
    records = PatientRecords(uow)
    retired = records.load(saga["retiredId"], merged=True)
    retired.patient.merged_into = None
    rolled_back = saga.get("undo") == "rollback"
    saga.update(state=SagaState.ROLLED_BACK if rolled_back else SagaState.UNMERGED,
                updatedAt=now.isoformat(), undoneAt=now.isoformat())
    store_of.stage_saga(uow, saga["retiredId"], saga)
    saga_for_event = {**saga, "state": SagaState.UNMERGING}  # the undo's reason
    records.save(retired, [_event(EventType.PATIENT_MERGE_ROLLED_BACK if rolled_back
                                  else EventType.PATIENT_UNMERGED, saga_for_event)],
                 actor=_actor(saga_for_event), now=now)
    return "unlock"


def _return_part(uow: UnitOfWork, saga: dict[str, Any], parts: list[list[str]], k: int,
                 now: datetime) -> str:
    """Part ``k`` of the copies, as the survivor holds them now, back into the retired
    record (one batch in its partition); the versions returned are kept on the saga."""
    records = PatientRecords(uow)
    retired = records.load(saga["retiredId"], merged=True)
    returned: dict[str, str] = dict(saga.get("returned") or {})
    back = store_of.return_part(uow, saga, parts[k], returned)
    saga.update(returnedParts=k + 1, returned=returned, updatedAt=now.isoformat())
    store_of.stage_saga(uow, saga["retiredId"], saga)
    records.save(retired, [_event(EventType.PATIENT_RECORDS_RETURNED, saga, copied=back,
                                  part=k + 1, parts=len(parts))],
                 actor=_actor(saga), now=now)
    return f"return {k + 1}/{len(parts)}"


def _take_back_part(uow: UnitOfWork, saga: dict[str, Any], receipt: dict[str, Any],
                    parts: list[list[str]], k: int, now: datetime) -> str:
    """Part ``k`` of the copies removed from the survivor (the first part with the
    allergies and summary it gained), each only at the version returned: one changed since
    is returned again first."""
    records = PatientRecords(uow)
    survivor = records.load(saga["survivorId"], merged=True)
    moved = store_of.take_back_part(uow, saga, parts[k], saga.get("returned") or {})
    if moved is None:
        # a copy changed since it went back (a dose given meanwhile): return the part again
        again = UnitOfWork(uow.store)
        fresh = store_of.load_saga(again, saga["retiredId"], saga["mergeId"]) or saga
        store_of.stage_saga(again, saga["retiredId"], {**fresh, "returnedParts": k,
                                                       "updatedAt": now.isoformat()})
        again.commit()
        return f"return {k + 1} again"
    taken: dict[str, list[str]] = {"allergies": [], **moved}
    if k == 0:
        taken["allergies"] = rules.unmerge_allergies(survivor.patient,
                                                     merge_id=saga["mergeId"], now=now)
        store_of.give_back_summary(uow, saga, receipt.get("summaryBefore"))
    last = k + 1 >= len(parts)
    store_of.stage_receipt(uow, saga["survivorId"], {
        **receipt, "removedParts": k + 1, "state": "undone" if last else "undoing",
        "updatedAt": now.isoformat()}, exists=True)
    records.save(survivor, [_event(EventType.PATIENT_RECORDS_UNMERGED,
                                   {**saga, "state": SagaState.UNMERGING}, copied=taken,
                                   part=k + 1, parts=len(parts))],
                 actor=_actor(saga), now=now)
    return f"take back {k + 1}/{len(parts)}"


def _move_bed(store: Any, patient_id: str, saga: dict[str, Any]) -> None:
    """A bed held by a moved stay names the record that holds the stay now."""
    uow = UnitOfWork(store)
    record = PatientRecords(uow).load(patient_id, merged=True)
    stay = record.admission
    if stay is None or not stay.bed:
        return
    beds.move_holder(store, ward_id=stay.ward_id, bed=stay.bed,
                     occupant=Occupant.of(record.patient, stay))


def merges_of(store: Any) -> list[dict[str, Any]]:
    """Every merge's saga (ids, MRNs, state, times), for the operators' commands: read from
    the change feed, so it costs a scan (never a page's read)."""
    return list(store_of.all_sagas(store))
