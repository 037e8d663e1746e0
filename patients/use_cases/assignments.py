"""Nurses to beds for a shift: set by the nurse in charge, read by everyone on the ward.

The assignments live in the ward's partition, one document per shift; every change is a
``NursesAssigned`` event in the ward's stream naming who made it (see
:mod:`patients.persistence.assignments`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.shifts import Nurse, Shift, ShiftHours, check_beds
from patients.persistence import assignments
from patients.persistence.assignments import ShiftSheet
from patients.persistence.beds import ward_pk
from patients.use_cases.beds import ward_entry


@dataclass(frozen=True)
class AssignNurses:
    """``beds``: bed → the nurse for it (None: nobody); beds not named keep their nurse
    unless ``replace`` (then they have nobody). ``expected_version``: the ETag of the
    shift's assignments as read, :data:`NEW` when none were (None: whatever is stored)."""

    ward_id: str
    shift: Shift
    beds: Mapping[str, Nurse | None] = field(default_factory=dict)
    replace: bool = False
    expected_version: str | None = None


@dataclass(frozen=True)
class CopyLastShift:
    """The shift before ``shift`` assigned again, bed for bed, over whatever it has."""

    ward_id: str
    shift: Shift
    expected_version: str | None = None


def shift_hours(store: DocumentStore, ward_id: str) -> ShiftHours:
    """The ward's shift hours (UnknownWard for a ward that does not exist)."""
    return ShiftHours.of_ward(ward_entry(store, ward_id))


def read_assignments(store: DocumentStore, ward_id: str, shift: Shift) -> ShiftSheet:
    """A shift's assignments (UnknownWard for a ward that does not exist)."""
    ward_entry(store, ward_id)
    return assignments.read_sheet(store, ward_id, shift)


NEW = "new"  # the version of a shift with no assignments stored yet


def _load(uow: UnitOfWork, ward_id: str, shift: Shift, expected: str | None) -> ShiftSheet:
    sheet = assignments.load(uow, ward_id, shift)
    if expected is not None and expected != (sheet.version or NEW):
        raise StaleWrite(ward_pk(ward_id), assignments.doc_id(shift))
    return sheet


def assign_nurses(cmd: AssignNurses, uow: UnitOfWork, *, actor: Actor) -> ShiftSheet:
    """Set the nurses of the shift's beds. InvalidInput (422) for a bed the ward does not
    have, UnknownWard (404), StaleWrite (412) when the shift changed since it was read."""
    ward = ward_entry(uow.store, cmd.ward_id)
    check_beds(cmd.beds, list(ward.get("beds", [])))
    sheet = _load(uow, cmd.ward_id, cmd.shift, cmd.expected_version)
    wanted: dict[str, Nurse] = {} if cmd.replace else dict(sheet.assignments)
    for bed, nurse in cmd.beds.items():
        if nurse is None:
            wanted.pop(bed, None)
        else:
            wanted[bed] = nurse
    return _save(uow, sheet, wanted, actor=actor)


def copy_last_shift(cmd: CopyLastShift, uow: UnitOfWork, *, actor: Actor) -> ShiftSheet:
    """Assign the shift as the one before it was (beds the ward no longer has left out)."""
    ward = ward_entry(uow.store, cmd.ward_id)
    before = assignments.read_sheet(uow.store, cmd.ward_id, cmd.shift.previous())
    sheet = _load(uow, cmd.ward_id, cmd.shift, cmd.expected_version)
    beds = set(ward.get("beds", []))
    return _save(uow, sheet, {b: n for b, n in before.assignments.items() if b in beds},
                 actor=actor)


def _save(uow: UnitOfWork, sheet: ShiftSheet, wanted: dict[str, Nurse], *,
          actor: Actor) -> ShiftSheet:
    if wanted == sheet.assignments and sheet.version is not None:
        return sheet  # nothing changed: no event
    now = datetime.now(UTC)
    version = assignments.save(uow, sheet, wanted, actor=actor, now=now)
    return ShiftSheet(sheet.ward_id, sheet.shift, wanted, version, now.isoformat(),
                      actor.display_name or actor.username)


def as_json(sheet: ShiftSheet, hours: ShiftHours, tz: tzinfo) -> dict[str, Any]:
    """The API's shape of a shift's assignments, with the shift's hours in zone ``tz``."""
    start, end = sheet.shift.bounds(hours, tz)
    return {"ward": sheet.ward_id, "shift": sheet.shift.name,
            "starts_at": start.isoformat(), "ends_at": end.isoformat(),
            "assignments": [{"bed": b, "nurse_id": n.nurse_id, "nurse_name": n.name}
                            for b, n in sorted(sheet.assignments.items())],
            "updated_at": sheet.updated_at, "updated_by": sheet.updated_by}
