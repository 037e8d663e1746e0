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
    allergies: list[AllergyOut]
    version: int
    etag: str


class AdmitIn(Schema):
    department_id: str = Field(min_length=1, max_length=40)
    ward_id: str = Field(min_length=1, max_length=40)
    bed: str = Field("", max_length=20)
    reason: str = Field(min_length=1, max_length=500)
    attending: str = Field("", max_length=150,
                           description="username of the attending clinician (optional)")
    attending_name: str = Field("", max_length=100,
                                description="free-text attending, when not a user here")


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


class AllergyOut(Schema):
    allergyId: str  # noqa: N815 - order and allergy bodies mirror the documents (camelCase)
    substance: str
    reaction: str
    severity: str
    recordedAt: str  # noqa: N815
    recordedBy: str  # noqa: N815


class AdministrationOut(Schema):
    administrationId: str  # noqa: N815
    at: str
    dose: str
    unit: str
    by: str
    note: str = ""


class OrderOut(Schema):
    """An order as stored (see docs/data-model.md); kind-specific fields are null otherwise."""

    orderId: str  # noqa: N815
    patientId: str  # noqa: N815
    admissionId: str  # noqa: N815
    kind: Literal["medication", "imaging", "lab"]
    status: Literal["created", "ready", "in_progress", "completed", "cancelled"]
    urgency: Literal["routine", "stat"]
    description: str
    departmentId: str  # noqa: N815
    wardId: str | None = None  # noqa: N815
    assigneeId: str | None = None  # noqa: N815
    assigneeName: str | None = None  # noqa: N815
    placedAt: str  # noqa: N815
    placedBy: str  # noqa: N815
    cancelReason: str | None = None  # noqa: N815
    administrations: list[AdministrationOut] = []
    version: int
    etag: str
    medicationCode: str | None = None  # noqa: N815
    medicationName: str | None = None  # noqa: N815
    dose: str | None = None
    unit: str | None = None
    route: str | None = None
    frequency: str | None = None
    startAt: str | None = None  # noqa: N815
    endAt: str | None = None  # noqa: N815
    asNeeded: bool | None = None  # noqa: N815
    modality: str | None = None
    bodyPart: str | None = None  # noqa: N815
    testCode: str | None = None  # noqa: N815
    testName: str | None = None  # noqa: N815
    note: str | None = None


class Problem(Schema):
    type: str
    title: str
    status: int
    detail: str
    code: str | None = Field(None, description="the domain error, e.g. BedOccupied")
    errors: list[dict[str, str]] | None = Field(
        None, description="field errors: [{field, message}]")
    current_etag: str | None = Field(None, description="412 only: the version stored now")


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
