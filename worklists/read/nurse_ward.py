"""The ward a nurse's worklists open on, from the shifts' assignments: one point read of a
shift's assignments per active ward (wards are few)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, tzinfo

from cosmos_backend.store import DocumentStore
from patients.domain.shifts import Shift, ShiftHours
from patients.persistence import assignments, reference


def assigned_ward(store: DocumentStore, nurse_id: str, now: datetime, tz: tzinfo,
                  among: Collection[str], *, last_shift: bool = False) -> str | None:
    """The code of the ward (of ``among``, in the order of the reference data) where the
    nurse has beds in the shift on now (``last_shift``: the shift before it); None when
    she has none."""
    for ward in reference.active(store, "Ward"):
        if ward["code"] not in among:
            continue
        shift = Shift.at(now, ShiftHours.of_ward(ward), tz)
        sheet = assignments.read_sheet(store, ward["code"],
                                       shift.previous() if last_shift else shift)
        if any(n.nurse_id == nurse_id for n in sheet.assignments.values()):
            return str(ward["code"])
    return None
