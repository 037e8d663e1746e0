"""Correcting a patient's demographics."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.events import DemographicsUpdated
from patients.persistence import identities
from patients.persistence.repository import PatientRecords


@dataclass(frozen=True)
class UpdateDemographics:
    patient_id: str
    given_name: str
    family_name: str
    birth_date: date
    sex: str
    expected_version: str | None = None  # of the patient


def update_demographics(cmd: UpdateDemographics, uow: UnitOfWork, *, actor: Actor) -> None:
    """Correct the patient's name, birth date or sex (StaleWrite if the patient changed
    since ``expected_version``); no change writes nothing."""
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    before = identities.key_of(record.patient)
    changes = record.patient.correct(given_name=cmd.given_name, family_name=cmd.family_name,
                                     birth_date=cmd.birth_date, sex=cmd.sex, now=now)
    if not changes:
        return  # nothing changed: no write, no event
    previous = changes.pop("previous")
    records.save(record, [DemographicsUpdated(changes=changes, previous=previous)],
                 actor=actor, now=now)
    # A corrected name or birth date: the possible-duplicate index follows, after the commit
    # (it only warns; the record is what counts).
    identities.move(uow.store, before, record.patient)
