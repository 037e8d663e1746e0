"""My patients: the signed-in nurse's patients this shift, each with what needs doing.

Bounded reads, composed at read time: per active ward one point read of the shift's
assignments (the ward's own shift on now); for each ward where the nurse has beds its bed
board (one query) and its medications due (one view query); per patient of the nurse the
unread results and the open handover (one query and one point read). So the list is as
current as the events already committed and projected, whenever it is read, and the page
refreshes itself like the other worklists.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any

from cosmos_backend.store import DocumentStore
from patients.domain.mar import STATUS_LABELS
from patients.domain.records import AllergyStatus
from patients.domain.shifts import Shift, ShiftHours
from patients.persistence import assignments, beds, handovers, queries, reference
from worklists.read.queries import Result, medications_due


def my_shift(store: DocumentStore, nurse_id: str, now: datetime, tz: tzinfo
             ) -> list[tuple[dict[str, Any], Shift, list[str]]]:
    """(ward entry, its shift on now, the nurse's beds there) for every ward where the
    nurse has beds this shift."""
    out = []
    for ward in reference.active(store, "Ward"):
        shift = Shift.at(now, ShiftHours.of_ward(ward), tz)
        sheet = assignments.read_sheet(store, ward["code"], shift)
        mine = sorted(b for b, n in sheet.assignments.items() if n.nurse_id == nurse_id)
        if mine:
            out.append((ward, shift, mine))
    return out


def unread_results(store: DocumentStore, patient_id: str) -> int:
    """Results recorded and not yet acknowledged by the ordering clinician."""
    return sum(1 for o in queries.orders(store, patient_id)
               if (o.get("results") or {}).get("resultedAt")
               and not (o.get("results") or {}).get("acknowledgedAt"))


def open_handover(store: DocumentStore, patient_id: str, shift: Shift) -> dict[str, Any] | None:
    """The previous shift's note not yet acknowledged (the one to take over), else this
    shift's note if it is written and open."""
    for which in (shift.previous(), shift):
        note = handovers.of_shift(store, patient_id, which.name)
        if note is not None and not note.get("acknowledgedAt"):
            return note
    return None


def my_patients(store: DocumentStore, nurse_id: str, *, tz: tzinfo = UTC,
                now: datetime | None = None) -> Result:
    """One row per occupied bed assigned to the nurse this shift, by ward and bed."""
    now = now or datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    gen = 0
    for ward, shift, mine in my_shift(store, nurse_id, now, tz):
        board = {b.code: b for b in beds.board(store, ward["code"], mine)}
        due = medications_due(store, ward["code"], tz=tz, now=now)
        gen = due.generation
        for bed in mine:
            occupant = board[bed].occupant
            if occupant is None:
                continue
            doses = [d for d in due.rows if d.get("patientId") == occupant.patient_id]
            late = [d for d in doses if d.get("doseStatus") == "late"]
            upcoming = [d for d in doses if d.get("doseStatus") != "late"]
            nxt = (upcoming or doses or [None])[0]
            note = open_handover(store, occupant.patient_id, shift)
            rows.append({
                "patientId": occupant.patient_id, "wardId": ward["code"],
                "wardName": ward.get("name") or ward["code"], "bed": bed,
                "name": occupant.display_name, "shift": shift.name,
                "allergy": occupant.allergy_status,
                "hasAllergies": occupant.allergy_status == AllergyStatus.HAS_ALLERGIES,
                "nextDoseAt": nxt["scheduledFor"] if nxt else None,
                "nextDose": nxt.get("description") if nxt else None,
                "nextDoseStatus": STATUS_LABELS.get(nxt["doseStatus"], "") if nxt else "",
                "late": len(late), "unreadResults": unread_results(store, occupant.patient_id),
                "handover": None if note is None else {
                    "id": note["handoverId"], "shift": note["shift"],
                    "by": note.get("writtenByName") or ""}})
    return Result(rows, None, gen, total=len(rows))
