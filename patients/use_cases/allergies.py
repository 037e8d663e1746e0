"""Recording a patient's allergies, "no known allergies", and removing an allergy."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.errors import InvalidInput
from patients.domain.events import AllergyAdded, AllergyRemoved, NoKnownAllergiesRecorded
from patients.persistence import reference
from patients.persistence.repository import PatientRecords


@dataclass(frozen=True)
class AddAllergy:
    """An allergy to a coded allergen (``allergen_code``, checkable by the order checks) or,
    when none fits, to free text (``substance``, not checkable): exactly one of the two."""

    patient_id: str
    substance: str = ""
    reaction: str = ""
    severity: str = ""
    expected_version: str | None = None  # of the patient
    allergen_code: str | None = None
    criticality: str = "unable-to-assess"


def add_allergy(cmd: AddAllergy, uow: UnitOfWork, *, actor: Actor) -> str:
    now = datetime.now(UTC)
    code, text = (cmd.allergen_code or "").strip(), (cmd.substance or "").strip()
    if code and text:
        raise InvalidInput("Choose an allergen from the list or describe the substance, not "
                           "both.", field="substance")
    if not code and not text:
        raise InvalidInput("Choose an allergen from the list, or describe the substance when "
                           "none fits.", field="substance")
    allergen = {"code": code, "name": reference.get(uow.store, "Allergen", code,
                                                    field="allergen_code")["name"]} if code else None
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    allergy = record.patient.add_allergy(
        allergy_id=str(uuid.uuid4()), allergen=allergen, substance=text, reaction=cmd.reaction, severity=cmd.severity,
        criticality=cmd.criticality, now=now, by=actor.username)
    records.save(record, [AllergyAdded(allergy=allergy)], actor=actor, now=now)
    return allergy["allergyId"]


@dataclass(frozen=True)
class RecordNoKnownAllergies:
    patient_id: str
    expected_version: str | None = None  # of the patient


def record_no_known_allergies(cmd: RecordNoKnownAllergies, uow: UnitOfWork, *,
                              actor: Actor) -> None:
    """Refused (409) while active allergies are recorded."""
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    nka = record.patient.record_no_known_allergies(now=now, by=actor.username)
    records.save(record, [NoKnownAllergiesRecorded(recorded_at=nka["recordedAt"],
                                                   recorded_by=nka["recordedBy"])],
                 actor=actor, now=now)


@dataclass(frozen=True)
class RemoveAllergy:
    """``reason``: entered-in-error, resolved or other (then ``detail`` is required)."""

    patient_id: str
    allergy_id: str
    expected_version: str | None = None  # of the patient
    reason: str = ""
    detail: str = ""


def remove_allergy(cmd: RemoveAllergy, uow: UnitOfWork, *, actor: Actor) -> None:
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    removed = record.patient.remove_allergy(cmd.allergy_id, reason=cmd.reason,
                                            detail=cmd.detail, now=now, by=actor.username)
    records.save(record, [AllergyRemoved(allergy_id=cmd.allergy_id,
                                         substance=removed["substance"],
                                         reason=removed["removalReason"],
                                         detail=removed["removalDetail"])],
                 actor=actor, now=now)
