"""JSON API for a ward's nurse assignments per shift (``/api/v1/wards/{code}/assignments``).

Reads: every clinical role (``read_assignments``); changes: the nurse in charge
(``assign_nurses``). ``shift`` names a shift as ``YYYY-MM-DD-day`` or ``YYYY-MM-DD-night``
(the ward's hours, local time); left out, the shift on now. A PUT replaces the shift's whole
assignment and needs ``If-Match`` (the ETag of the assignments as read; ``"new"`` when the
shift has none yet).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from ninja import Field, Header, Router, Schema

from hisadmin.core import policy
from hisadmin.core.inputs import Text, hospital_time_zone
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response, require_if_match
from hisadmin.core.store import get_store, new_uow
from patients import staff
from patients.api.schemas import ERRORS_SCHEMA, StrictIn
from patients.domain.shifts import Nurse, Shift
from patients.use_cases.assignments import (
    NEW,
    AssignNurses,
    ShiftSheet,
    as_json,
    assign_nurses,
    read_assignments,
    shift_hours,
)

router = Router(tags=["wards and beds"])


class AssignmentOut(Schema):
    bed: str
    nurse_id: str = Field(description="the nurse's user id")
    nurse_name: str


class AssignmentsOut(Schema):
    ward: str
    shift: str = Field(description="YYYY-MM-DD-day or YYYY-MM-DD-night")
    starts_at: str = Field(description="when the shift starts: ISO 8601 with the offset of "
                           "the hospital's time zone, from the ward's shift hours")
    ends_at: str = Field(description="when it ends (the next shift starts), alike")
    assignments: list[AssignmentOut]
    updated_at: str | None = None
    updated_by: str | None = Field(None, description="who set them last (full name)")


class AssignmentIn(StrictIn):
    bed: Text(40, min_length=1)
    nurse: Text(150, min_length=1) = Field(description="the nurse's user id or username")


class AssignmentsIn(StrictIn):
    assignments: list[AssignmentIn] = Field(
        max_length=500, description="every assigned bed of the shift; beds left out have "
        "no nurse")


def shift_of(store: Any, code: str, shift: str) -> Shift:
    """The shift named, or the one on now in the ward's hours."""
    if shift:
        return Shift.parse(shift)
    return Shift.at(timezone.now(), shift_hours(store, code), hospital_time_zone())


@router.get("/{code}/assignments", response={200: AssignmentsOut, **ERRORS_SCHEMA},
            summary="Which nurse has which bed of a ward in a shift")
def get_assignments(request: HttpRequest, code: str, shift: Text(20) = "") -> HttpResponse:
    """With its ``ETag`` (``"new"`` when nothing is stored yet). 404: unknown ward; 422: a
    shift not named ``YYYY-MM-DD-day|night``."""
    policy.require(request.user, "read_assignments")
    store = get_store()
    sheet = read_assignments(store, code, shift_of(store, code, shift))
    return json_response(request, _out(store, sheet), etag=sheet.version or NEW)


def _out(store: Any, sheet: ShiftSheet) -> dict[str, Any]:
    return as_json(sheet, shift_hours(store, sheet.ward_id), hospital_time_zone())


@router.put("/{code}/assignments", response={200: AssignmentsOut, **ERRORS_SCHEMA},
            summary="Set a shift's nurses by bed (the nurse in charge)")
def put_assignments(request: HttpRequest, code: str, payload: AssignmentsIn,
                    shift: Text(20) = "",
                    if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """The whole shift: each bed with its nurse; beds left out have nobody. ``If-Match``
    (required): the ETag the GET gave; without it 428, a stale one 412 and nothing changes.
    A nurse who is not an active nurse, or a bed the ward does not have, is a 422."""
    policy.require(request.user, "assign_nurses")
    version = require_if_match(if_match)
    store = get_store()
    which = shift_of(store, code, shift)
    beds: dict[str, Nurse | None] = {}
    for i, item in enumerate(payload.assignments):
        nurse_id, name = staff.nurse(item.nurse, field=f"assignments.{i}.nurse")
        beds[item.bed] = Nurse(nurse_id, name)
    sheet = assign_nurses(AssignNurses(code, which, beds, replace=True,
                                       expected_version=version),
                          new_uow(), actor=actor_for(request.user))
    return json_response(request, _out(store, sheet), etag=sheet.version or NEW)
