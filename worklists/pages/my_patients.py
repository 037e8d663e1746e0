"""My patients: the signed-in nurse's patients this shift, on the worklists' page frame
(refreshing itself every few seconds)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from hisadmin.core.local_time import human_time
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.domain.errors import DomainError
from patients.domain.observations import RISK_LABELS, Risk
from patients.domain.records import (
    allergies_in_words,
    allergy_names,
)
from patients.domain.shifts import Shift
from patients.persistence import handovers, queries
from worklists.pages.worklists import Column, Page, RowAction, _render
from worklists.read.my_patients import my_patients as read_my_patients
from worklists.read.queries import Result


def _next_dose(row: dict[str, Any]) -> str:
    if not row.get("nextDoseAt"):
        return "None within the hour"
    return f"{human_time(row['nextDoseAt'])} {row.get('nextDose') or ''} " \
           f"({row.get('nextDoseStatus', '').lower()})"


def _handover(row: dict[str, Any]) -> str:
    h = row.get("handover")
    if h:
        return f"Open, from {h['by']}"
    taken = row.get("handoverTaken")
    return f"Acknowledged by {taken}" if taken else "None"


def _handover_href(row: dict[str, Any]) -> str:
    """The chart's handovers when one is open or taken over; no link to nothing ("" →
    plain text)."""
    if not (row.get("handover") or row.get("handoverTaken")):
        return ""
    return reverse("admin:patient_chart", args=[row["patientId"]]) + "#handovers"


def _in_words(result: Result) -> Result:
    """The rows with what the projected row does not name, read from the record: the
    allergies of a patient who has some (one point read) and, with no note open, who took
    over the last shift's or this shift's note (one query of the patient's latest two)."""
    store = get_store()
    for row in result.rows:
        try:
            if row.get("hasAllergies"):
                patient = queries.patient(store, row["patientId"])
                row["allergyNames"] = allergy_names(patient.get("allergies") or [])
            if not row.get("handover"):
                row["handoverTaken"] = _taken_by(store, row)
        except DomainError:  # the patient's record is gone: the row says what it knows
            continue
    return result


def _taken_by(store: Any, row: dict[str, Any]) -> str | None:
    try:
        shift = Shift.parse(row["shift"])
    except DomainError:
        return None
    notes = {n.get("shift"): n for n in handovers.latest(store, row["patientId"], limit=2)}
    for which in (shift.previous(), shift):
        note = notes.get(which.name)
        if note is not None and note.get("acknowledgedAt"):
            return str(note.get("acknowledgedByName") or "the next nurse")
    return None


def _news2(row: dict[str, Any]) -> str:
    badge = row.get("news2")
    if not badge:
        return "No score yet"
    label = RISK_LABELS[Risk(badge["risk"])]
    return (f"{badge['score']} {label}" + (", not escalated" if badge.get("notEscalated")
                                           else "") + f"; next set {human_time(badge['nextDueAt'])}")


COLUMNS = [
    Column("Bed", lambda r: f"{r['wardName']} · {r['bed']}"),
    Column("Name", lambda r: r["name"], link=True, wrap=True),
    Column("Allergies", lambda r: allergies_in_words(r["allergy"], r.get("allergyNames") or ())),
    Column("Next dose", _next_dose),
    Column("Late doses", lambda r: r["late"] or "None"),
    Column("Results not yet seen", lambda r: r["unreadResults"] or "None"),
    Column("Handover", _handover, href=_handover_href),
    Column("NEWS2", lambda r: _news2(r)),
]


@requires("read_my_patients")
def my_patients(request: HttpRequest) -> HttpResponse:
    page = Page("My patients", "worklist_my_patients", COLUMNS, [], None, "",
                [RowAction("Write handover", lambda r: reverse(
                    "admin:handover_new", args=[r["patientId"]]), "write_handover"),
                 RowAction("Record observations", lambda r: reverse(
                     "admin:observations_new", args=[r["patientId"]]), "record_observations")],
                empty="No beds are assigned to you this shift; the nurse in charge assigns "
                      "them on the bed board.",
                intro="The patients of the beds assigned to you this shift.")
    return _render(request, page, lambda token: _in_words(read_my_patients(
        get_store(), str(request.user.pk), tz=timezone.get_current_timezone())))
