"""API schemas for the clinical record."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from ninja import Schema
from pydantic import Field

Sex = Literal["female", "male", "other", "unknown"]


class PatientIn(Schema):
    given_name: str = Field(min_length=1, max_length=100)
    family_name: str = Field(min_length=1, max_length=100)
    birth_date: date
    sex: Sex = "unknown"
    mrn: str = Field("", max_length=20, description="Leave empty to generate one.")


class PatientOut(Schema):
    id: str
    mrn: str
    given_name: str
    family_name: str
    birth_date: date
    sex: str
    allergies: list[dict[str, Any]]
    version: int
    etag: str


class AdmitIn(Schema):
    department_id: str = Field(min_length=1, max_length=40)
    ward_id: str = Field(min_length=1, max_length=40)
    bed: str = Field("", max_length=20)
    reason: str = Field(min_length=1, max_length=500)
    attending_name: str = Field("", max_length=100)


class AdmissionOut(Schema):
    id: str
    patient_id: str
    status: str
    department_id: str
    ward_id: str
    bed: str | None
    attending_name: str
    reason: str
    started_at: str
    ended_at: str | None
    disposition: str | None
    etag: str


class DischargeIn(Schema):
    disposition: Literal["home", "transfer-other-facility", "care-home", "deceased",
                         "self-discharge"]


class EventOut(Schema):
    seq: int
    type: str
    occurred_at: str
    actor: str
    data: dict[str, Any]


class EventPage(Schema):
    items: list[EventOut]
    continuation: str | None


class Problem(Schema):
    type: str
    title: str
    status: int
    detail: str
    errors: list[dict[str, str]] | None = None


ERRORS_SCHEMA = {400: Problem, 401: Problem, 403: Problem, 404: Problem, 409: Problem,
                 412: Problem, 422: Problem}


def patient_out(doc: dict[str, Any]) -> dict[str, Any]:
    c = doc["docContents"]
    return {"id": c["patientId"], "mrn": c["mrn"], "given_name": c["givenName"],
            "family_name": c["familyName"], "birth_date": c["birthDate"], "sex": c["sex"],
            "allergies": c.get("allergies", []), "version": c.get("version", 1),
            "etag": doc["_etag"]}


def admission_out(doc: dict[str, Any]) -> dict[str, Any]:
    c = doc["docContents"]
    return {"id": c["admissionId"], "patient_id": c["patientId"], "status": c["status"],
            "department_id": c["departmentId"], "ward_id": c["wardId"], "bed": c.get("bed"),
            "attending_name": c.get("attendingName", ""), "reason": c.get("reason", ""),
            "started_at": c["startedAt"], "ended_at": c.get("endedAt"),
            "disposition": c.get("disposition"), "etag": doc["_etag"]}


def event_out(doc: dict[str, Any]) -> dict[str, Any]:
    c = doc["docContents"]
    return {"seq": c["seq"], "type": c["type"], "occurred_at": c["occurredAt"],
            "actor": c["actor"]["username"], "data": c["data"]}
