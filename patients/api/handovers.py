"""JSON API for shift handover: the outgoing nurse's SBAR note on a patient and the
incoming nurse's acknowledgement (``/api/v1/patients/{id}/handovers``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field, Router, Schema

from hisadmin.core import policy
from hisadmin.core.inputs import MultilineText, Text
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response
from hisadmin.core.store import new_uow
from patients.api.schemas import ERRORS_SCHEMA, StrictIn
from patients.domain.handovers import MAX_PART
from patients.domain.shifts import Shift
from patients.use_cases.handovers import (
    AcknowledgeHandover,
    WriteHandover,
    acknowledge_handover,
    write_handover,
)

router = Router(tags=["handover"])


class HandoverIn(StrictIn):
    situation: MultilineText(MAX_PART, min_length=1)
    background: MultilineText(MAX_PART, min_length=1)
    assessment: MultilineText(MAX_PART, min_length=1)
    recommendation: MultilineText(MAX_PART, min_length=1)
    shift: Text(20) = Field("", description="the shift handing over, YYYY-MM-DD-day|night; "
                            "left out: the one on now in the patient's ward")
    replaces: Text(40) = Field("", description="to replace a colleague's note: its "
                               "written_at as read (without it: 409 handover-by-other)")


class HandoverOut(Schema):
    id: str = Field(description="the shift's name: one handover per patient and shift")
    shift: str
    ward: str
    bed: str | None
    situation: str
    background: str
    assessment: str
    recommendation: str
    written_at: str
    written_by: str = Field(description="full name")
    acknowledged_at: str | None
    acknowledged_by: str | None = Field(description="full name")


def handover_out(note: dict[str, Any]) -> dict[str, Any]:
    return {"id": note["handoverId"], "shift": note["shift"], "ward": note["wardId"],
            "bed": note.get("bed"), **{k: note[k] for k in (
                "situation", "background", "assessment", "recommendation")},
            "written_at": note["writtenAt"], "written_by": note["writtenByName"],
            "acknowledged_at": note.get("acknowledgedAt"),
            "acknowledged_by": note.get("acknowledgedByName")}


@router.post("/patients/{patient_id}/handovers", response={201: HandoverOut, **ERRORS_SCHEMA},
             summary="Write the shift's SBAR handover of a patient (the outgoing nurse)")
def post_handover(request: HttpRequest, patient_id: str, payload: HandoverIn) -> HttpResponse:
    """One per patient and shift: writing it again corrects it until it is acknowledged
    (then 409 ``handover-taken``); a colleague's note only with ``replaces`` naming the
    version read (else 409 ``handover-by-other``), theirs kept among the earlier versions.
    409 when the patient is not admitted."""
    policy.require(request.user, "write_handover")
    data = payload.dict()
    shift = Shift.parse(data.pop("shift")) if data.get("shift") else None
    data.pop("shift", None)
    replaces = data.pop("replaces", None) or None
    note = write_handover(WriteHandover(patient_id, data, shift, replaces), new_uow(),
                          actor=actor_for(request.user))
    return json_response(request, handover_out(note), 201)


@router.post("/patients/{patient_id}/handovers/{handover_id}/acknowledge",
             response={200: HandoverOut, **ERRORS_SCHEMA},
             summary="Acknowledge a handover (the incoming nurse)")
def post_acknowledge(request: HttpRequest, patient_id: str, handover_id: str) -> HttpResponse:
    """409 when it was acknowledged already (``handover-taken``) or by the nurse who wrote
    it (``own-handover``); 404 for an unknown handover."""
    policy.require(request.user, "acknowledge_handover")
    note = acknowledge_handover(AcknowledgeHandover(patient_id, handover_id), new_uow(),
                                actor=actor_for(request.user))
    return json_response(request, handover_out(note))
