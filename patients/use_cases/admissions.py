"""Use cases: each takes a command and a unit of work and commits one batch per patient.

Adapters (views, API, management commands) check roles and build commands; these functions
enforce the domain rules, write the aggregates and their events together, and attribute every
change to the acting user.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime

from cosmos_backend import errors, keys
from cosmos_backend.outbox import append_events
from cosmos_backend.store import Cond, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.errors import (
    DuplicateMrn,
    InvalidInput,
    MrnBeingRegistered,
    NotAdmitted,
    UnknownPatient,
)
from patients.domain.records import Admission, Patient
from patients.persistence import beds, mrn, reference
from patients.persistence.documents import (
    PATIENT_ID,
    admission_from_doc,
    admission_to_doc,
    patient_from_doc,
    patient_to_doc,
)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class RegisterPatient:
    given_name: str
    family_name: str
    birth_date: date
    sex: str = "unknown"
    mrn: str = ""  # empty: generated


@dataclass(frozen=True)
class AdmitPatient:
    patient_id: str
    department_id: str
    ward_id: str
    reason: str
    bed: str = ""
    attending_id: str = ""
    attending_name: str = ""


@dataclass(frozen=True)
class DischargePatient:
    patient_id: str
    disposition: str
    expected_etag: str | None = None


DISPOSITIONS = ("home", "transfer-other-facility", "care-home", "deceased", "self-discharge")


def load_patient(uow: UnitOfWork, patient_id: str) -> tuple[Patient, dict]:
    try:
        doc = uow.get(keys.patient(patient_id), PATIENT_ID)
    except (errors.NotFound, errors.InvalidRequest):
        raise UnknownPatient(f"No patient with id {patient_id}.") from None
    return patient_from_doc(doc), doc


def active_admission_doc(uow: UnitOfWork, patient_id: str) -> dict | None:
    docs = uow.query_all(keys.patient(patient_id), Query(where=(
        Cond("docType", "=", "Admission"), Cond("docContents.status", "=", "active"))))
    return docs[0] if docs else None


def _reserve_mrn(store: DocumentStore, wanted: str, patient_id: str) -> dict:
    """Reserve the MRN asked for, or the next generated one that is still free."""
    if wanted:
        return mrn.reserve(store, wanted, patient_id)
    for _ in range(20):
        # A generated MRN can collide with one typed in by hand that matched the format.
        try:
            return mrn.reserve(store, mrn.next_mrn(store), patient_id)
        except (DuplicateMrn, MrnBeingRegistered):
            continue
    raise errors.Unavailable("could not find a free MRN; retry")


def register_patient(cmd: RegisterPatient, uow: UnitOfWork, *, actor: Actor) -> Patient:
    """Reserve the MRN (its own partition), then commit patient + event; release on failure."""
    now = _now()
    patient_id = str(uuid.uuid4())
    wanted = cmd.mrn.strip().upper()
    # Validate everything before touching the store, so bad input writes nothing.
    patient = Patient.register(patient_id=patient_id, mrn=wanted or "TMP000",
                               given_name=cmd.given_name, family_name=cmd.family_name,
                               birth_date=cmd.birth_date, sex=cmd.sex, today=now.date(), now=now)
    store = uow.store
    reservation = _reserve_mrn(store, wanted, patient_id)
    patient.mrn = reservation["docContents"]["mrn"]
    try:
        uow.add(patient_to_doc(patient))
        append_events(uow, keys.patient(patient_id), [("PatientRegistered", {
            "patientId": patient_id, "mrn": patient.mrn, "givenName": patient.given_name,
            "familyName": patient.family_name, "birthDate": patient.birth_date.isoformat(),
            "sex": patient.sex,
        })], actor=actor.as_dict(), now=now)
        uow.commit()
    except BaseException:
        mrn.release(store, reservation)
        raise
    mrn.confirm(store, reservation)
    return patient


def admit_patient(cmd: AdmitPatient, uow: UnitOfWork, *, actor: Actor) -> Admission:
    now = _now()
    store = uow.store
    ward = reference.get(store, "Ward", cmd.ward_id, field="ward_id")
    reference.get(store, "Department", cmd.department_id, field="department_id")
    if ward["departmentId"] != cmd.department_id:
        raise InvalidInput(f"Ward {cmd.ward_id} does not belong to department "
                           f"{cmd.department_id}.", field="ward_id")
    bed = cmd.bed.strip()
    if bed and bed not in ward.get("beds", []):
        raise InvalidInput(f"Ward {cmd.ward_id} has no bed {bed}.", field="bed")
    _, _ = load_patient(uow, cmd.patient_id)
    active = active_admission_doc(uow, cmd.patient_id)
    admission = Admission.start(
        admission_id=str(uuid.uuid4()), patient_id=cmd.patient_id,
        department_id=cmd.department_id, ward_id=cmd.ward_id, bed=bed or None,
        # Only a clinician can be the attending: a clerk admitting is not one by default.
        attending_id=cmd.attending_id or (actor.id if "clinician" in actor.roles and
                                          not cmd.attending_name else ""),
        attending_name=cmd.attending_name or (actor.display_name or actor.username
                                              if "clinician" in actor.roles else ""),
        reason=cmd.reason, now=now, active=admission_from_doc(active) if active else None)
    reservation = None
    if admission.bed:
        reservation = beds.reserve(store, ward_id=admission.ward_id, bed=admission.bed,
                                   patient_id=cmd.patient_id,
                                   admission_id=admission.admission_id)
    try:
        uow.add(admission_to_doc(admission))
        append_events(uow, keys.patient(cmd.patient_id), [("AdmissionStarted", {
            "admissionId": admission.admission_id, "departmentId": admission.department_id,
            "wardId": admission.ward_id, "bed": admission.bed,
            "attendingId": admission.attending_id, "attendingName": admission.attending_name,
            "reason": admission.reason, "startedAt": admission.started_at,
        })], actor=actor.as_dict(), now=now)
        uow.commit()
    except BaseException:
        if reservation is not None:
            beds.release(store, reservation)
        raise
    return admission


def discharge_patient(cmd: DischargePatient, uow: UnitOfWork, *, actor: Actor) -> Admission:
    if cmd.disposition not in DISPOSITIONS:
        raise InvalidInput(f"Disposition must be one of {', '.join(DISPOSITIONS)}.",
                           field="disposition")
    now = _now()
    load_patient(uow, cmd.patient_id)
    doc = active_admission_doc(uow, cmd.patient_id)
    if doc is None:
        raise NotAdmitted("This patient has no active admission to discharge.")
    uow.expect_etag(doc, cmd.expected_etag)
    admission = admission_from_doc(doc)
    admission.end(disposition=cmd.disposition, now=now)
    from patients.use_cases.clinical import MAX_CANCELLATIONS_PER_BATCH, cancel_active_orders

    # Discharge ends the stay and cancels its still-active orders, each with its own event,
    # in the discharge batch. A batch holds 100 operations (two per cancelled order), so
    # a stay with more active orders first cancels the surplus in batches of their own:
    # each is a whole command, and a failure in between leaves the stay active to retry.
    while True:
        chunk = UnitOfWork(uow.store)
        events = cancel_active_orders(chunk, cmd.patient_id, admission.admission_id,
                                      reason="Patient discharged",
                                      keep=MAX_CANCELLATIONS_PER_BATCH)
        if not events:
            break
        append_events(chunk, keys.patient(cmd.patient_id), events, actor=actor.as_dict(), now=now)
        chunk.commit()
    updated = admission_to_doc(admission)
    updated["_etag"] = doc["_etag"]
    uow.update(updated)
    cancellations = cancel_active_orders(uow, cmd.patient_id, admission.admission_id,
                                         reason="Patient discharged")
    append_events(uow, keys.patient(cmd.patient_id), cancellations + [("AdmissionEnded", {
        "admissionId": admission.admission_id, "disposition": admission.disposition,
        "endedAt": admission.ended_at, "wardId": admission.ward_id, "bed": admission.bed,
    })], actor=actor.as_dict(), now=now)
    uow.commit()
    if admission.bed:
        beds.free(uow.store, ward_id=admission.ward_id, bed=admission.bed,
                  admission_id=admission.admission_id)
    return admission
