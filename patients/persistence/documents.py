"""Mapping between the record's domain objects and store documents (docs/data-model.md).

The patient's open record — the patient, the event-stream head, the active admission and
the active orders — carries the top-level field ``open: true``, so a command reads all it
needs with one single-partition query (:mod:`patients.persistence.repository`). It is not a
``Query*`` field on purpose: those put a document into the views' partial indexes.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document
from hisadmin.core import keys
from patients.domain.orders import KINDS, Order
from patients.domain.records import Admission, AdmissionStatus, Patient, read_allergy

PATIENT_ID = "patient"
PATIENT, ADMISSION, ORDER = "Patient", "Admission", "Order"
OPEN_FIELD = "open"  # marks a document of the open record (see the module docstring)


def _asc(*paths: str) -> list[dict[str, str]]:
    return [{"path": p, "order": "ascending"} for p in paths]


# The patient partition's query shapes (filter paths, sort paths, then id).
COMPOSITE_INDEXES: list[list[dict[str, str]]] = [
    _asc("/open", "/id"),  # the open record: one query per command
    _asc("/docType", "/id"),  # audit trail (events by id = sequence), aggregates by type
    # Admissions newest first: ORDER BY startedAt DESC, id DESC reads these backwards (the
    # id tie-break follows the last key's direction, so one ascending index serves both).
    _asc("/docType", "/docContents/startedAt", "/id"),
    _asc("/docContents/startedAt", "/id"),
    _asc("/docType", "/docContents/status", "/id"),  # active orders on the chart
]


def admission_doc_id(admission_id: str) -> str:
    return f"adm-{admission_id}"


def order_doc_id(order_id: str) -> str:
    return f"ord-{order_id}"


def mark_open(doc: Document, is_open: bool = True) -> Document:
    if is_open:
        doc[OPEN_FIELD] = True
    return doc


def patient_to_doc(p: Patient) -> Document:
    return mark_open(wrap(doc_id=PATIENT_ID, pk=keys.patient(p.patient_id), doc_type=PATIENT,
                          contents={
                    "patientId": p.patient_id, "mrn": p.mrn, "givenName": p.given_name,
                    "familyName": p.family_name, "birthDate": p.birth_date.isoformat(),
                    "sex": p.sex, "allergies": p.allergies,
                    "noKnownAllergies": p.no_known_allergies,
                    "allergyStatus": str(p.allergy_status), "version": p.version,
                    "createdAt": p.created_at, "updatedAt": p.updated_at,
                    # only on a record merged (or being merged) into another
                    **({"mergedInto": p.merged_into} if p.merged_into else {}),
                    # only on a record others were merged into
                    **({"mergedFrom": p.merged_from} if p.merged_from else {})}))


def patient_from_doc(doc: Document) -> Patient:
    c = doc["docContents"]
    return Patient(patient_id=c["patientId"], mrn=c["mrn"], given_name=c["givenName"],
                   family_name=c["familyName"], birth_date=date.fromisoformat(c["birthDate"]),
                   sex=c.get("sex", "unknown"),
                   allergies=[read_allergy(a) for a in c.get("allergies", [])],
                   no_known_allergies=c.get("noKnownAllergies") or None,
                   version=c.get("version", 1), created_at=c.get("createdAt", ""),
                   updated_at=c.get("updatedAt", ""), merged_into=c.get("mergedInto") or None,
                   merged_from=list(c.get("mergedFrom") or []))


def admission_contents(a: Admission) -> dict[str, Any]:
    # The discharge note only once there is one: stays stored before it existed compare equal.
    note = {"dischargeNote": a.discharge_note} if a.discharge_note else {}
    return {
        "admissionId": a.admission_id, "patientId": a.patient_id, "status": str(a.status),
        "departmentId": a.department_id, "wardId": a.ward_id, "bed": a.bed,
        "attendingId": a.attending_id, "attendingName": a.attending_name, "reason": a.reason,
        "startedAt": a.started_at, "endedAt": a.ended_at, "disposition": a.disposition,
        "transfers": a.transfers, "version": a.version, **note,
    }


def admission_to_doc(a: Admission) -> Document:
    return mark_open(wrap(doc_id=admission_doc_id(a.admission_id),
                          pk=keys.patient(a.patient_id), doc_type=ADMISSION,
                          contents=admission_contents(a)), a.status == AdmissionStatus.ACTIVE)


def admission_from_doc(doc: Document) -> Admission:
    c = doc["docContents"]
    return Admission(
        admission_id=c["admissionId"], patient_id=c["patientId"],
        department_id=c["departmentId"], ward_id=c["wardId"], bed=c.get("bed"),
        attending_id=c.get("attendingId", ""), attending_name=c.get("attendingName", ""),
        reason=c.get("reason", ""), started_at=c["startedAt"], status=c["status"],
        ended_at=c.get("endedAt"), disposition=c.get("disposition"),
        transfers=list(c.get("transfers", [])), version=c.get("version", 1),
        discharge_note=c.get("dischargeNote", ""),
    )


def order_to_doc(o: Order) -> Document:
    return mark_open(wrap(doc_id=order_doc_id(o.order_id), pk=keys.patient(o.patient_id),
                          doc_type=ORDER, sub_type=KINDS[o.kind], contents=o.as_record()),
                     o.active)


def order_from_doc(doc: Document) -> Order:
    return Order.from_record(doc["docContents"])
