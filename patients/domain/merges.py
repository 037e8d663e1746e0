"""Merging a duplicate registration into the surviving record: the rules, pure.

Two records of one person: the *survivor* keeps its id, MRN and demographics and gains the
*retired* record's history (allergies, stays, orders, observations, handover notes); the
retired record stays readable, marked "merged into" the survivor, and refuses every command.
The steps that carry this out over the two partitions are the saga of
:mod:`patients.use_cases.merges`; what may be merged, and what the survivor will hold, is
decided here. No Django, no store.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from patients.domain.errors import InvalidInput, MergeInProgress, MergeRefused, PatientMerged
from patients.domain.records import (
    Admission,
    AdmissionStatus,
    AllergyStatus,
    Patient,
    active_allergies,
    allergy_status,
)

UNDO_WINDOW = timedelta(days=1)  # a merge may be undone this long after it finished
REASON_MIN, REASON_MAX = 3, 500


class LockState(StrEnum):
    """What the retired record's ``merged_into`` says."""

    MERGING = "merging"  # the saga runs: commands wait (409 merge-in-progress)
    MERGED = "merged"  # for good: commands go to the survivor (409 patient-merged)
    UNMERGING = "unmerging"  # the undo runs


class SagaState(StrEnum):
    """Where a merge stands (the saga document's ``state``)."""

    MERGING = "merging"
    MERGED = "merged"
    ROLLED_BACK = "rolled_back"
    UNMERGING = "unmerging"
    UNMERGED = "unmerged"


SAGA_STATE_LABELS = {SagaState.MERGING: "Merging", SagaState.MERGED: "Merged",
                     SagaState.ROLLED_BACK: "Rolled back",
                     SagaState.UNMERGING: "Being undone", SagaState.UNMERGED: "Undone"}
IN_PROGRESS = (SagaState.MERGING, SagaState.UNMERGING)


def clean_reason(reason: str) -> str:
    reason = " ".join((reason or "").split())
    if len(reason) < REASON_MIN:
        raise InvalidInput("Say why (at least a few words).", field="reason")
    if len(reason) > REASON_MAX:
        raise InvalidInput(f"Keep the reason to {REASON_MAX} characters.", field="reason")
    return reason


def refuse_commands(patient: Patient) -> None:
    """A record merged into another (or being merged) takes no command: PatientMerged
    naming the survivor, or MergeInProgress while the merge's steps run."""
    lock = patient.merged_into
    if not lock:
        return
    survivor, mrn = str(lock.get("survivorId") or ""), str(lock.get("survivorMrn") or "")
    merge_id = str(lock.get("mergeId") or "")
    if lock.get("state") == LockState.MERGED:
        raise PatientMerged(f"This record ({patient.mrn}) was merged into {mrn or survivor}: "
                            "open that record instead.", survivor_id=survivor,
                            survivor_mrn=mrn, merge_id=merge_id)
    raise MergeInProgress(f"This record ({patient.mrn}) is being merged with {mrn or survivor} "
                          "or the merge is being undone; try again in a moment.",
                          survivor_id=survivor, survivor_mrn=mrn, merge_id=merge_id)


def _names(allergies: list[dict[str, Any]]) -> str:
    return ", ".join(a["substance"] for a in active_allergies(allergies))


def check_merge(survivor: Patient, survivor_stay: Admission | None, retired: Patient,
                retired_stay: Admission | None) -> None:
    """Refuse a merge the records do not allow (nothing is written): one record twice, a
    record already merged, two active stays, or allergy statuses that contradict each other
    (one "no known allergies", the other an active allergy: a clinician resolves it first)."""
    if survivor.patient_id == retired.patient_id:
        raise InvalidInput("Choose two different records: a record cannot be merged into "
                           "itself.", field="retired_id")
    if retired.merged_into:
        lock = retired.merged_into
        raise MergeRefused(f"{retired.mrn} is already merged (or being merged) into "
                           f"{lock.get('survivorMrn') or lock.get('survivorId')}.",
                           conflict="already-merged")
    refuse_commands(survivor)
    check_pair(survivor, survivor_stay, retired, retired_stay)


def check_pair(survivor: Patient, survivor_stay: Admission | None, retired: Patient,
               retired_stay: Admission | None) -> None:
    """The two records' own conflicts (asked again while the merge runs: the survivor
    still takes commands): two active stays, contradicting allergy statuses."""
    active = AdmissionStatus.ACTIVE
    if (survivor_stay is not None and survivor_stay.status == active
            and retired_stay is not None and retired_stay.status == active):
        raise MergeRefused(f"Both records have an active admission ({survivor.mrn} and "
                           f"{retired.mrn}): discharge one of the stays first.",
                           conflict="both-admitted")
    for nka, other in ((survivor, retired), (retired, survivor)):
        if (allergy_status(nka.allergies, nka.no_known_allergies)
                == AllergyStatus.NO_KNOWN_ALLERGIES and active_allergies(other.allergies)):
            raise MergeRefused(
                f"Allergy statuses contradict: {nka.mrn} records no known allergies, "
                f"{other.mrn} an active allergy ({_names(other.allergies)}). A clinician "
                "must resolve this on the records before they are merged.",
                conflict="allergy-status-conflict")


def _same_allergy(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.get("allergenCode") or b.get("allergenCode"):
        return a.get("allergenCode") == b.get("allergenCode")
    return str(a.get("substance", "")).casefold() == str(b.get("substance", "")).casefold()


def allergies_gained(survivor: Patient, retired: Patient, *, merge_id: str
                     ) -> list[dict[str, Any]]:
    """The retired record's allergies the survivor gains, each marked with its source
    (``mergedFrom``: the merge, the retired record and its MRN): every one, removed ones
    too (their history), except an active one the survivor already has active."""
    held = active_allergies(survivor.allergies)
    source = {"mergeId": merge_id, "patientId": retired.patient_id, "mrn": retired.mrn}
    return [{**a, "mergedFrom": source} for a in retired.allergies
            if not (a.get("status", "active") == "active"
                    and any(_same_allergy(a, h) for h in held))]


def merge_allergies(survivor: Patient, retired: Patient, *, merge_id: str,
                    now: datetime) -> list[str]:
    """Give the survivor the retired record's allergies (:func:`allergies_gained`) and its
    "no known allergies" if the survivor has no status of its own, and name the retired
    record among those merged into it; returns the ids gained. Idempotent: allergies of
    this merge already there are not added again."""
    if not any(m.get("mergeId") == merge_id for m in survivor.merged_from):
        survivor.merged_from.append({"mergeId": merge_id, "patientId": retired.patient_id,
                                     "mrn": retired.mrn})
    have = {a.get("allergyId") for a in survivor.allergies}
    gained = [a for a in allergies_gained(survivor, retired, merge_id=merge_id)
              if a.get("allergyId") not in have]
    survivor.allergies.extend(gained)
    if gained and active_allergies(gained):
        survivor.no_known_allergies = None
    elif (survivor.allergy_status == AllergyStatus.UNKNOWN and retired.no_known_allergies
          and not active_allergies(survivor.allergies)):
        survivor.no_known_allergies = {**retired.no_known_allergies, "mergeId": merge_id}
    survivor.version += 1
    survivor.updated_at = now.isoformat()
    return [str(a["allergyId"]) for a in gained]


def unmerge_allergies(survivor: Patient, *, merge_id: str, now: datetime) -> list[str]:
    """Take back from the survivor what a merge gave it (its allergies of ``merge_id``, a
    "no known allergies" it brought, the retired record's name among those merged into
    it); returns the allergy ids taken back."""
    survivor.merged_from = [m for m in survivor.merged_from if m.get("mergeId") != merge_id]
    taken = [a for a in survivor.allergies if (a.get("mergedFrom") or {}).get("mergeId")
             == merge_id]
    survivor.allergies = [a for a in survivor.allergies if a not in taken]
    if (survivor.no_known_allergies or {}).get("mergeId") == merge_id:
        survivor.no_known_allergies = None
    survivor.version += 1
    survivor.updated_at = now.isoformat()
    return [str(a["allergyId"]) for a in taken]


def undo_deadline(merged_at: str) -> datetime:
    return datetime.fromisoformat(merged_at) + UNDO_WINDOW


def check_undo(saga: dict[str, Any], now: datetime) -> None:
    """A merge may be undone once it finished, within :data:`UNDO_WINDOW`."""
    state = saga.get("state")
    if state != SagaState.MERGED:
        said = SAGA_STATE_LABELS.get(state, state).lower()  # type: ignore[call-overload]
        raise MergeRefused(f"This merge is {said}: only a finished merge can be undone.",
                           conflict="not-merged")
    if now > undo_deadline(saga["mergedAt"]):
        raise MergeRefused("A merge can be undone within a day of it; this one finished "
                           f"at {saga['mergedAt']}.", conflict="undo-too-late")


class RecordLike(Protocol):
    """What :func:`merged_view` reads of each side (a record snapshot has it)."""

    patient: Patient | None
    admissions: list[Admission]
    orders: list[Any]


def merged_view(survivor: RecordLike, retired: RecordLike) -> dict[str, Any]:
    """What the survivor will hold once ``retired`` is merged into it, for the preview:
    the survivor's demographics, ``allergies`` (the survivor's and those it gains, each
    gained one with ``mergedFrom``), ``allergy_status``, ``admissions`` and ``orders``
    (both records', newest first; the retired's marked ``from_mrn``), and ``refusal``: why
    the merge would be refused, or None."""
    s, r = survivor.patient, retired.patient
    if s is None or r is None:
        raise InvalidInput("Both records must exist.", field="retired_id")
    gained = allergies_gained(s, r, merge_id="preview")
    allergies = [*s.allergies, *gained]
    nka = s.no_known_allergies or (r.no_known_allergies if not active_allergies(allergies)
                                   else None)
    s_stay = next((a for a in survivor.admissions if a.status == AdmissionStatus.ACTIVE), None)
    r_stay = next((a for a in retired.admissions if a.status == AdmissionStatus.ACTIVE), None)
    refusal = None
    try:
        check_merge(s, s_stay, r, r_stay)
    except (MergeRefused, PatientMerged, InvalidInput) as exc:
        refusal = {"conflict": getattr(exc, "conflict", exc.problem_type), "detail": str(exc)}
    stays = sorted([(a, "") for a in survivor.admissions] + [(a, r.mrn) for a in
                                                               retired.admissions],
                   key=lambda p: p[0].started_at, reverse=True)
    orders = sorted([(o, "") for o in survivor.orders] + [(o, r.mrn) for o in retired.orders],
                    key=lambda p: p[0].placed_at, reverse=True)
    return {"patient": s, "allergies": allergies,
            "allergy_status": allergy_status(allergies, nka),
            "admissions": [{"admission": a, "from_mrn": mrn} for a, mrn in stays],
            "orders": [{"order": o, "from_mrn": mrn} for o, mrn in orders],
            "refusal": refusal}
