"""My patients: the signed-in nurse's patients this shift, each with what needs doing.

Projected views only: per active ward one point read of the ward's shift row (its nurses by
bed, projected from the ward's ``NursesAssigned`` events, :mod:`worklists.persistence.
ward_shifts`), then, for each ward where the nurse has beds, one query of the ward's
``MyPatients`` bucket for those beds. A row (:func:`worklists.projection.rows.
my_patients_row`) holds what the patient's events say: bed, name, the allergy flag and the
allergies' names, the courses of their scheduled medications with the dose times answered,
how many results wait to be acknowledged, the handover notes still open and who took over
the recent ones. What depends on the clock is worked out here: the next dose and the late
ones (with the MAR's rules, as Medications due does) and which note is the one to take over
(the last shift's, else this shift's), or who took it over.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any

from cosmos_backend.store import Cond, DocumentStore, Query
from patients.domain.mar import STATUS_LABELS
from patients.domain.records import AllergyStatus
from patients.domain.shifts import Shift, ShiftHours
from patients.persistence import reference
from worklists.persistence.generations import active_generation
from worklists.persistence.view_rows import page_rows
from worklists.persistence.ward_shifts import shift_beds
from worklists.projection.due import doses_due
from worklists.projection.rows import MY_PATIENTS
from worklists.read.queries import MAX_PAGE, Result


def my_shift(store: DocumentStore, gen: int, nurse_id: str, now: datetime, tz: tzinfo
             ) -> list[tuple[dict[str, Any], Shift, list[str]]]:
    """(ward entry, its shift on now, the nurse's beds there) for every ward where the
    nurse has beds this shift, from the wards' projected shift rows."""
    out = []
    for ward in reference.active(store, "Ward"):
        shift = Shift.at(now, ShiftHours.of_ward(ward), tz)
        beds = shift_beds(store, gen, ward["code"], shift.name)
        mine = sorted(b for b, n in beds.items() if str(n.get("nurseId")) == nurse_id)
        if mine:
            out.append((ward, shift, mine))
    return out


def ward_rows(store: DocumentStore, gen: int, ward: str, beds: list[str]
              ) -> list[dict[str, Any]]:
    """The ward's rows of patients in ``beds`` (one query; a ward holds a row per occupied
    bed, so one page mostly)."""
    query = Query(where=(Cond("QueryBed", "in", list(beds)),),
                  order_by=(("QueryBed", "ASC"),))
    rows: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page, token = page_rows(store, gen, MY_PATIENTS, ward, query, page_size=MAX_PAGE,
                                continuation=token)
        rows.extend(page)
        if not token:
            return rows


def open_handover(row: dict[str, Any], shift: Shift) -> dict[str, Any] | None:
    """The previous shift's note not yet acknowledged (the one to take over), else this
    shift's note if it is written and open."""
    notes = {n.get("handoverId"): n for n in row.get("handovers") or ()}
    for which in (shift.previous(), shift):
        note = notes.get(which.name)
        if note is not None:
            return note
    return None


def taken_by(row: dict[str, Any], shift: Shift) -> str | None:
    """Who took over the previous shift's note, else this shift's (None: neither taken;
    "" when the name was not recorded)."""
    taken = row.get("taken") or {}
    for which in (shift.previous(), shift):
        if which.name in taken:
            return str(taken[which.name])
    return None


def present(row: dict[str, Any], ward: dict[str, Any], shift: Shift, now: datetime,
            tz: tzinfo) -> dict[str, Any]:
    """A row as the page and the API show it, on the clock ``now``."""
    doses = [d for course in row.get("doses") or () for d in doses_due(course, now, tz)]
    doses.sort(key=lambda d: (d["scheduledFor"], d["orderId"]))
    late = [d for d in doses if d.get("doseStatus") == "late"]
    upcoming = [d for d in doses if d.get("doseStatus") != "late"]
    nxt = (upcoming or doses or [None])[0]
    note = open_handover(row, shift)
    return {
        "patientId": row["patientId"], "wardId": ward["code"],
        "wardName": ward.get("name") or ward["code"], "bed": row["bed"],
        "name": row["name"], "shift": shift.name, "allergy": row["allergy"],
        "hasAllergies": row["allergy"] == AllergyStatus.HAS_ALLERGIES,
        "allergyNames": list(row.get("allergyNames") or ()),
        "nextDoseAt": nxt["scheduledFor"] if nxt else None,
        "nextDose": nxt.get("description") if nxt else None,
        "nextDoseStatus": STATUS_LABELS.get(nxt["doseStatus"], "") if nxt else "",
        "late": len(late), "unreadResults": int(row.get("unreadResults") or 0),
        "news2": row.get("news2"),
        "handover": None if note is None else {
            "id": note["handoverId"], "shift": note["shift"],
            "by": note.get("writtenByName") or ""},
        "handoverTaken": None if note is not None else taken_by(row, shift)}


def my_patients(store: DocumentStore, nurse_id: str, *, tz: tzinfo = UTC,
                now: datetime | None = None) -> Result:
    """One row per occupied bed assigned to the nurse this shift, by ward and bed."""
    now = now or datetime.now(UTC)
    gen = active_generation(store)
    rows: list[dict[str, Any]] = []
    for ward, shift, mine in my_shift(store, gen, nurse_id, now, tz):
        found = ward_rows(store, gen, ward["code"], mine)
        found.sort(key=lambda r: (r["bed"], r["name"], r["patientId"]))
        rows.extend(present(r, ward, shift, now, tz) for r in found)
    return Result(rows, None, gen, total=len(rows))
