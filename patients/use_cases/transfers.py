"""Moving an admitted patient to another ward or bed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.beds import Occupant
from patients.domain.errors import InvalidInput, NotAdmitted
from patients.domain.events import PatientTransferred
from patients.domain.records import Admission
from patients.persistence import beds, reference
from patients.persistence.repository import PatientRecords


@dataclass(frozen=True)
class TransferPatient:
    patient_id: str
    ward_id: str
    bed: str = ""
    expected_version: str | None = None  # of the active admission


def transfer_patient(cmd: TransferPatient, uow: UnitOfWork, *, actor: Actor) -> Admission:
    """Move the active admission. The new bed is held first; the old one goes to cleaning
    after the event (:mod:`patients.use_cases.beds`)."""
    now = datetime.now(UTC)
    store = uow.store
    ward = reference.get(store, "Ward", cmd.ward_id, field="ward_id")
    bed = cmd.bed.strip() or None
    if bed and bed not in ward.get("beds", []):
        raise InvalidInput(f"{ward.get('name') or cmd.ward_id} has no bed {bed}; choose one "
                           "of its beds.", field="bed")
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    admission = record.admission
    if admission is None:
        raise NotAdmitted("Only an admitted patient can be transferred; admit them first.")
    records.expect(record, admission, cmd.expected_version)
    move = admission.transfer(ward_id=cmd.ward_id, department_id=ward["departmentId"], bed=bed,
                              now=now, by=actor.username)
    held = None
    if bed:
        held = beds.reserve(store, ward_id=cmd.ward_id, bed=bed,
                            occupant=Occupant.of(record.patient, admission), now=now)
    try:
        records.save(record, [PatientTransferred(admission_id=admission.admission_id,
                                                 move=move)], actor=actor, now=now)
    except BaseException:
        if held is not None:
            beds.release(store, held)
        raise
    return admission
