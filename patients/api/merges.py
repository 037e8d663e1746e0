"""JSON API for merging duplicate registrations (``/api/v1/patients/{survivor}/merge``).
Thin: ask the policy, parse, call the use case, answer the survivor (docs/patients.md,
"Merging duplicate records")."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Header, Router

from hisadmin.core import policy
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response, require_if_match
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.api.schemas import ERRORS_SCHEMA, MergedOut, MergeIn, Problem, UnmergeIn, patient_out
from patients.persistence import merges, queries

router = Router(tags=["patients"])
ACTION = "merge_records"
# If-Match is required on a merge (not only on edits): the hisadmin OpenAPI marks it so.
IF_MATCH_REQUIRED = {"x-if-match-required": True}


def _merged(request: HttpRequest, survivor_id: str, merge_id: str) -> HttpResponse:
    store = get_store()
    view = queries.patient(store, survivor_id)
    saga = merges.read_saga(store, view, merge_id)
    return json_response(request, {"merge_id": merge_id, "state": saga["state"],
                                   "patient": patient_out(view)}, etag=view["etag"])


@router.post("/patients/{survivor_id}/merge",
             response={200: MergedOut, 428: Problem, **ERRORS_SCHEMA},
             summary="Merge a duplicate record into this one", openapi_extra=IF_MATCH_REQUIRED)
def merge(request: HttpRequest, survivor_id: str, payload: MergeIn,
          if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """Records staff (clerks). ``If-Match`` (required): the survivor's ETag — without it
    428, stale 412; ``retired_etag`` the retired record's (stale: 412). The retired record's
    stays, orders, allergies, observations and handover notes move to this one; the retired
    record stays readable with ``merged_into`` and refuses every command (409
    ``patient-merged`` with a ``Location`` to the survivor). 200: the survivor and the
    merge's id (undo it within a day). Refused with 409 naming the conflict:
    ``both-admitted``, ``allergy-status-conflict`` (one records no known allergies, the
    other an active allergy), ``already-merged``, ``patient-merged`` (this record is itself
    merged); 422 for the same record twice or no reason. A merge the survivor stops
    allowing while it runs ends ``rolled_back``."""
    policy.require(request.user, ACTION)
    version = require_if_match(if_match)
    merge_id = use_cases.merge_patients(use_cases.MergePatients(
        survivor_id=survivor_id, retired_id=payload.retired_id, reason=payload.reason,
        survivor_version=version, retired_version=payload.retired_etag or None), new_uow(),
        actor=actor_for(request.user))
    return _merged(request, survivor_id, merge_id)


@router.post("/patients/{survivor_id}/merges/{merge_id}/undo",
             response={200: MergedOut, **ERRORS_SCHEMA}, summary="Undo a merge (within a day)")
def undo(request: HttpRequest, survivor_id: str, merge_id: str,
         payload: UnmergeIn) -> HttpResponse:
    """Records staff. The retired record gets its history back as it is now and takes
    commands again; what this record gained from it is taken back (what was recorded here
    after the merge stays). 409 ``undo-too-late`` a day after the merge, ``not-merged`` for
    a merge not finished or already undone; 404 for a merge not into this record."""
    policy.require(request.user, ACTION)
    use_cases.unmerge_patients(use_cases.UnmergePatients(
        survivor_id=survivor_id, merge_id=merge_id, reason=payload.reason), new_uow(),
        actor=actor_for(request.user))
    return _merged(request, survivor_id, merge_id)
