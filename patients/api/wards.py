"""JSON API for wards and their beds (``/api/v1/wards``): the bed board for clients.

Reads: any clinical role (``read_beds``). Marking a bed clean: a nurse or a clerk
(``clean_bed``). Each board is one query in the ward's partition; the list of wards is one
query per ward.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Field, Header, Router, Schema

from cosmos_backend.envelope import etag
from hisadmin.core import access_log, policy
from hisadmin.core.inputs import Text
from hisadmin.core.parameters import one_of
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response
from hisadmin.core.store import get_store, new_uow
from patients.api.schemas import ERRORS_SCHEMA, Problem
from patients.domain.beds import Bed, BedState, ward_metrics
from patients.persistence import beds, reference
from patients.use_cases.beds import MarkBedClean, mark_bed_clean, ward_entry

router = Router(tags=["wards and beds"])
BedStateName = Literal["free", "occupied", "cleaning"]


class WardOut(Schema):
    code: str
    name: str
    department: str = Field(description="the department's code")
    department_name: str
    beds: int
    occupied: int
    free: int
    cleaning: int


class OccupantOut(Schema):
    id: str = Field(description="the patient's id")
    name: str = Field(description="FAMILY, Given")
    sex: str
    birth_date: str
    age: int | None
    admitted_at: str
    length_of_stay: int = Field(description="whole days since admission")
    allergies: str = Field(description="has_allergies | no_known_allergies | unknown")


class BedOut(Schema):
    code: str
    state: BedStateName
    since: str | None = Field(None, description="when the bed entered this state")
    patient_id: str | None = Field(None, description="an occupied bed's patient (patient.id)")
    patient: OccupantOut | None = Field(None, description="an occupied bed's patient")
    etag: str | None = Field(None, description="the version of an occupied or cleaning bed's "
                             "state: If-Match for marking it clean; null for a free bed")


def bed_out(bed: Bed, today: date, etag: str | None = None) -> dict[str, Any]:
    occupant = bed.occupant
    patient = (
        None
        if occupant is None
        else {
            "id": occupant.patient_id,
            "name": occupant.display_name,
            "sex": occupant.sex,
            "birth_date": occupant.birth_date,
            "age": occupant.age(today),
            "admitted_at": occupant.admitted_at,
            "length_of_stay": occupant.length_of_stay(today),
            "allergies": occupant.allergy_status,
        }
    )
    return {
        "code": bed.code,
        "state": str(bed.state),
        "since": bed.since,
        "patient_id": occupant and occupant.patient_id,
        "patient": patient,
        "etag": etag,
    }


def ward_out(code: str, ward: dict[str, Any], board: list[Bed]) -> dict[str, Any]:
    departments = reference.all_of(get_store(), "Department")
    department = ward.get("departmentId", "")
    m = ward_metrics(board)
    return {
        "code": code,
        "name": ward.get("name", code),
        "department": department,
        "department_name": (departments.get(department) or {}).get("name", department),
        "beds": m.beds,
        "occupied": m.occupied,
        "free": m.free,
        "cleaning": m.cleaning,
    }


@router.get(
    "",
    response={200: list[WardOut], 400: Problem, 401: Problem, 403: Problem},
    summary="Wards with their bed counts",
)
def wards(request: HttpRequest, department: Text(40) = "") -> list[dict[str, Any]]:
    """Active wards by code (``department``: only that department's), each with its beds
    counted: occupied, free, being cleaned. An unknown ``department`` is a 400
    (type /api/v1/problems/bad-parameter) listing the codes."""
    policy.require(request.user, "read_beds")
    store = get_store()
    one_of("department", department, sorted(reference.all_of(store, "Department")))
    return [
        ward_out(w["code"], w, beds.board(store, w["code"], w.get("beds", [])))
        for w in reference.active(store, "Ward")
        if not department or w.get("departmentId") == department
    ]


@router.get(
    "/{code}/beds",
    response={200: list[BedOut], **ERRORS_SCHEMA},
    summary="A ward's beds: free, occupied (by whom) or being cleaned",
)
def ward_beds(request: HttpRequest, code: str) -> list[dict[str, Any]]:
    """Every bed of the ward in the ward's order (the counts: ``GET /wards``), a held one
    with its ``etag``. An unknown ward is a 404 problem."""
    policy.require(request.user, "read_beds")
    store = get_store()
    ward = ward_entry(store, code)
    today = datetime.now(UTC).date()
    held = beds.held(store, code)  # the board's one query, kept for the holds' etags
    answer = [
        bed_out(beds.bed_from_doc(held[c]), today, etag(held[c])) if c in held
        else bed_out(Bed(ward_id=code, code=c, state=BedState.FREE), today)
        for c in ward.get("beds", [])
    ]
    access_log.note_list(request, (b["patient_id"] for b in answer))  # the access audit
    return answer


@router.post(
    "/{code}/beds/{bed}/clean",
    response={200: BedOut, **ERRORS_SCHEMA},
    summary="Mark a bed being cleaned as clean: it is free again",
)
def clean_bed(request: HttpRequest, code: str, bed: str,
              if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """A nurse or a clerk. ``If-Match`` (optional): the bed's ``etag`` from the board; stale
    (or the bed free meanwhile) → 412. 404: unknown ward or bed; 409: the bed is not being
    cleaned."""
    policy.require(request.user, "clean_bed")
    mark_bed_clean(MarkBedClean(code, bed, if_match or None), new_uow(),
                   actor=actor_for(request.user))
    return json_response(request, {"code": bed, "state": "free", "since": None,
                                   "patient_id": None, "patient": None, "etag": None})
