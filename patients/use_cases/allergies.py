"""Recording and removing a patient's allergies."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.events import AllergyAdded, AllergyRemoved
from patients.persistence.repository import PatientRecords


@dataclass(frozen=True)
class AddAllergy:
    patient_id: str
    substance: str
    reaction: str
    severity: str
    expected_version: str | None = None  # of the patient


def add_allergy(cmd: AddAllergy, uow: UnitOfWork, *, actor: Actor) -> str:
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    allergy = record.patient.add_allergy(allergy_id=str(uuid.uuid4()), substance=cmd.substance,
                                         reaction=cmd.reaction, severity=cmd.severity, now=now,
                                         by=actor.username)
    records.save(record, [AllergyAdded(allergy=allergy)], actor=actor, now=now)
    return allergy["allergyId"]


@dataclass(frozen=True)
class RemoveAllergy:
    patient_id: str
    allergy_id: str
    expected_version: str | None = None  # of the patient


def remove_allergy(cmd: RemoveAllergy, uow: UnitOfWork, *, actor: Actor) -> None:
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    removed = record.patient.remove_allergy(cmd.allergy_id, now=now)
    records.save(record, [AllergyRemoved(allergy_id=cmd.allergy_id,
                                         substance=removed["substance"])], actor=actor, now=now)
