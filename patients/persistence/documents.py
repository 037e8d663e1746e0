"""Mapping between domain objects and store documents (see docs/data-model.md)."""

from __future__ import annotations

from datetime import date
from typing import Any

from cosmos_backend import keys
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document
from patients.domain.records import Admission, Patient

PATIENT_ID = "patient"


def _asc(*paths: str) -> list[dict[str, str]]:
    return [{"path": p, "order": "ascending"} for p in paths]


# The patient partition's query shapes (filter paths, sort paths, then id).
COMPOSITE_INDEXES: list[list[dict[str, str]]] = [
    _asc("/docType", "/id"),  # audit trail (events by id = sequence), aggregates by type
    # Admissions newest first: ORDER BY startedAt DESC, id DESC reads these backwards (the
    # id tie-break follows the last key's direction, so one ascending index serves both).
    _asc("/docType", "/docContents/startedAt", "/id"),
    _asc("/docContents/startedAt", "/id"),
    _asc("/docType", "/docContents/status", "/id"),  # the active admission / active orders
]


def admission_doc_id(admission_id: str) -> str:
    return f"adm-{admission_id}"


def patient_to_doc(p: Patient) -> Document:
    return wrap(doc_id=PATIENT_ID, pk=keys.patient(p.patient_id), doc_type="Patient", contents={
        "patientId": p.patient_id, "mrn": p.mrn, "givenName": p.given_name,
        "familyName": p.family_name, "birthDate": p.birth_date.isoformat(), "sex": p.sex,
        "allergies": p.allergies, "version": p.version, "createdAt": p.created_at,
        "updatedAt": p.updated_at,
    })


def patient_from_doc(doc: Document) -> Patient:
    c = doc["docContents"]
    return Patient(patient_id=c["patientId"], mrn=c["mrn"], given_name=c["givenName"],
                   family_name=c["familyName"], birth_date=date.fromisoformat(c["birthDate"]),
                   sex=c.get("sex", "unknown"), allergies=list(c.get("allergies", [])),
                   version=c.get("version", 1), created_at=c.get("createdAt", ""),
                   updated_at=c.get("updatedAt", ""))


def admission_contents(a: Admission) -> dict[str, Any]:
    return {
        "admissionId": a.admission_id, "patientId": a.patient_id, "status": a.status,
        "departmentId": a.department_id, "wardId": a.ward_id, "bed": a.bed,
        "attendingId": a.attending_id, "attendingName": a.attending_name, "reason": a.reason,
        "startedAt": a.started_at, "endedAt": a.ended_at, "disposition": a.disposition,
        "transfers": a.transfers, "version": a.version,
    }


def admission_to_doc(a: Admission) -> Document:
    return wrap(doc_id=admission_doc_id(a.admission_id), pk=keys.patient(a.patient_id),
                doc_type="Admission", contents=admission_contents(a))


def admission_from_doc(doc: Document) -> Admission:
    c = doc["docContents"]
    return Admission(
        admission_id=c["admissionId"], patient_id=c["patientId"],
        department_id=c["departmentId"], ward_id=c["wardId"], bed=c.get("bed"),
        attending_id=c.get("attendingId", ""), attending_name=c.get("attendingName", ""),
        reason=c.get("reason", ""), started_at=c["startedAt"], status=c["status"],
        ended_at=c.get("endedAt"), disposition=c.get("disposition"),
        transfers=list(c.get("transfers", [])), version=c.get("version", 1),
    )


def order_doc_id(order_id: str) -> str:
    return f"ord-{order_id}"


def order_contents(o: Any) -> dict[str, Any]:
    return {
        "orderId": o.order_id, "patientId": o.patient_id, "admissionId": o.admission_id,
        "kind": o.kind, "status": o.status, "urgency": o.urgency,
        "description": o.description, "departmentId": o.department_id, "wardId": o.ward_id,
        "assigneeId": o.assignee_id, "assigneeName": o.assignee_name,
        "placedAt": o.placed_at, "placedBy": o.placed_by, "cancelReason": o.cancel_reason,
        "administrations": o.administrations, "version": o.version, **o.details,
    }


def order_to_doc(o: Any) -> Document:
    from patients.domain.orders import KINDS

    return wrap(doc_id=order_doc_id(o.order_id), pk=keys.patient(o.patient_id),
                doc_type="Order", sub_type=KINDS[o.kind], contents=order_contents(o))


ORDER_CORE = ("orderId", "patientId", "admissionId", "kind", "status", "urgency",
              "description", "departmentId", "wardId", "assigneeId", "assigneeName",
              "placedAt", "placedBy", "cancelReason", "administrations", "version")


def order_from_doc(doc: Document) -> Any:
    from patients.domain.orders import Order

    c = doc["docContents"]
    return Order(
        order_id=c["orderId"], patient_id=c["patientId"], admission_id=c["admissionId"],
        kind=c["kind"], urgency=c["urgency"], description=c["description"],
        department_id=c["departmentId"], ward_id=c.get("wardId") or "",
        placed_at=c["placedAt"], placed_by=c.get("placedBy", ""),
        details={k: v for k, v in c.items() if k not in ORDER_CORE},
        status=c["status"], assignee_id=c.get("assigneeId"),
        assignee_name=c.get("assigneeName"), cancel_reason=c.get("cancelReason"),
        administrations=list(c.get("administrations", [])), version=c.get("version", 1))
