"""Shift handover: the outgoing nurse writes an SBAR note on a patient, the incoming nurse
acknowledges it. Both are events in the patient's stream (``HandoverWritten``,
``HandoverAcknowledged``), written with the note in one batch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import hospital_time_zone
from patients.domain import handovers as rules
from patients.domain.errors import InvalidInput, NotAdmitted
from patients.domain.events import HandoverAcknowledged, HandoverWritten
from patients.domain.shifts import Shift, ShiftHours
from patients.persistence import handovers
from patients.persistence.repository import PatientRecords
from patients.use_cases.beds import ward_entry


@dataclass(frozen=True)
class WriteHandover:
    """``shift``: the shift handing over (None: the one on now in the patient's ward);
    ``parts``: situation, background, assessment, recommendation; ``replaces``: the
    ``writtenAt`` of a colleague's version the writer read and chose to replace."""

    patient_id: str
    parts: Mapping[str, str] = field(default_factory=dict)
    shift: Shift | None = None
    replaces: str | None = None


@dataclass(frozen=True)
class AcknowledgeHandover:
    patient_id: str
    handover_id: str


def write_handover(cmd: WriteHandover, uow: UnitOfWork, *, actor: Actor,
                   now: datetime | None = None) -> dict[str, Any]:
    """The note as stored. NotAdmitted (409) when the patient is in no ward; InvalidInput
    (422) for an empty part; HandoverTaken (409) when the shift's note was acknowledged;
    HandoverByOther (409) when a colleague's version would be replaced unasked."""
    now = now or datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    stay = record.admission
    if stay is None:
        raise NotAdmitted("A handover is written for a patient on a ward; this patient is not "
                          "admitted.")
    parts = rules.note(cmd.parts)
    hours, tz = ShiftHours.of_ward(ward_entry(uow.store, stay.ward_id)), hospital_time_zone()
    shift = cmd.shift or Shift.at(now, hours, tz)
    if cmd.shift is not None:
        _check_within_stay(shift, shift.bounds(hours, tz), stay.started_at, now)
    current = handovers.load(uow, cmd.patient_id, shift.name)
    rules.may_rewrite(current, actor.id, cmd.replaces)
    note = {"handoverId": shift.name, "shift": shift.name, "wardId": stay.ward_id,
            "bed": stay.bed, "admissionId": stay.admission_id, **parts,
            "writtenAt": now.isoformat(), "writtenBy": actor.id,
            "writtenByName": actor.display_name or actor.username,
            "acknowledgedAt": None, "acknowledgedBy": None, "acknowledgedByName": None}
    earlier = rules.earlier_versions(current)
    handovers.stage(uow, cmd.patient_id, {**note, "earlier": earlier},
                    exists=current is not None)
    records.save(record, [HandoverWritten(handover=note)], actor=actor, now=now)
    return {**note, "earlier": earlier}


def shift_note(patient_id: str, uow: UnitOfWork, *, now: datetime | None = None
               ) -> dict[str, Any] | None:
    """The note of the shift on now in the patient's ward (None: none yet, or the patient is
    in no ward): what a writer opens to correct or replace."""
    stay = PatientRecords(uow).load(patient_id).admission
    if stay is None:
        return None
    return handovers.load(uow, patient_id, _shift_on(uow, stay.ward_id, now).name)


def _shift_on(uow: UnitOfWork, ward_id: str, now: datetime | None) -> Shift:
    return Shift.at(now or datetime.now(UTC),
                    ShiftHours.of_ward(ward_entry(uow.store, ward_id)), hospital_time_zone())


def _check_within_stay(shift: Shift, bounds: tuple[datetime, datetime], admitted_at: str,
                       now: datetime) -> None:
    """A handover is about a shift of this stay: one that ends after the admission and has
    begun by now, or :class:`InvalidInput` on ``shift`` (422)."""
    start, end = bounds
    if end <= datetime.fromisoformat(admitted_at) or start > now:
        raise InvalidInput(f"The shift {shift.name} is not during this patient's stay; name "
                           "a shift from the admission to now.", field="shift")


def acknowledge_handover(cmd: AcknowledgeHandover, uow: UnitOfWork, *, actor: Actor,
                         now: datetime | None = None) -> dict[str, Any]:
    """The note, acknowledged. UnknownHandover (404); HandoverTaken / OwnHandover (409)."""
    now = now or datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    try:
        shift = Shift.parse(cmd.handover_id, field="handover_id")
    except InvalidInput:
        shift = None
    current = None if shift is None else handovers.load(uow, cmd.patient_id, shift.name)
    if current is None:
        raise rules.UnknownHandover(f"This patient has no handover {cmd.handover_id}.")
    rules.may_acknowledge(current, actor.id)
    name = actor.display_name or actor.username
    note = {**current, "acknowledgedAt": now.isoformat(), "acknowledgedBy": actor.id,
            "acknowledgedByName": name}
    handovers.stage(uow, cmd.patient_id, note, exists=True)
    event = HandoverAcknowledged(handover_id=cmd.handover_id, shift=current["shift"],
                                 acknowledged_at=note["acknowledgedAt"],
                                 acknowledged_by=actor.id, acknowledged_by_name=name)
    records.save(record, [event], actor=actor, now=now)
    return note
