"""Registering a patient: hold the MRN and check for a possible duplicate, each in its own
partition, then commit the record."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.errors import DuplicateMrn, MrnBeingRegistered
from patients.domain.events import PatientRegistered
from patients.domain.records import Patient
from patients.persistence import identities, mrn
from patients.persistence.repository import PatientRecords


@dataclass(frozen=True)
class RegisterPatient:
    given_name: str
    family_name: str
    birth_date: date
    sex: str = "unknown"
    mrn: str = ""  # empty: generated
    # True: the clerk checked the possible duplicates and this is not the same person.
    confirm_not_duplicate: bool = False


def _hold_mrn(store: DocumentStore, wanted: str, patient_id: str) -> mrn.Hold:
    """Hold the MRN asked for, or the next generated one that is still free."""
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
    """Hold the MRN, enter the patient in the identity index (each its own partition), then
    commit patient + event; give both back on failure.

    Raises PossibleDuplicate (nothing written) when a patient with the same family and given
    name, case and accents aside, and the same birth date is registered, unless
    ``confirm_not_duplicate``. Three round trips without a duplicate: the MRN holder, the
    index entry, the patient batch (docs/patients.md, "Possible duplicates").
    """
    now = datetime.now(UTC)
    patient_id = str(uuid.uuid4())
    wanted = cmd.mrn.strip().upper()
    # Validate everything before touching the store, so bad input writes nothing.
    patient = Patient.register(patient_id=patient_id, mrn=wanted or "TMP000",
                               given_name=cmd.given_name, family_name=cmd.family_name,
                               birth_date=cmd.birth_date, sex=cmd.sex, today=now.date(), now=now)
    # The MRN first: a taken MRN is an error to fix, a possible duplicate only a question.
    held = _hold_mrn(uow.store, wanted, patient_id)
    patient.mrn = held.mrn
    try:
        person = identities.hold(uow.store, patient, confirmed=cmd.confirm_not_duplicate)
    except BaseException:
        mrn.release(uow.store, held)
        raise
    records = PatientRecords(uow)
    try:
        record = records.create(patient)
        records.save(record, [PatientRegistered(
            patient_id=patient_id, mrn=patient.mrn, given_name=patient.given_name,
            family_name=patient.family_name, birth_date=patient.birth_date.isoformat(),
            sex=patient.sex)], actor=actor, now=now)
    except BaseException:
        mrn.release(uow.store, held)
        identities.release(uow.store, person)
        raise
    return patient
