"""My patients: the signed-in nurse's patients this shift, on the worklists' page frame
(refreshing itself every few seconds, saying how fresh the views are). Every cell is of the
projected rows (:mod:`worklists.read.my_patients`): no record is read per row."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from hisadmin.core.local_time import human_time
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.domain.observations import RISK_LABELS, Risk
from patients.domain.records import allergies_in_words
from worklists.pages.worklists import Column, Page, RowAction, _render
from worklists.read.my_patients import my_patients as read_my_patients


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
    if taken is None:
        return "None"
    return f"Acknowledged by {taken}" if taken else "Acknowledged"


def _handover_href(row: dict[str, Any]) -> str:
    """The chart's handovers when one is open or taken over; no link to nothing ("" →
    plain text)."""
    if not row.get("handover") and row.get("handoverTaken") is None:
        return ""
    return reverse("admin:patient_chart", args=[row["patientId"]]) + "#handovers"


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
    return _render(request, page, lambda token: read_my_patients(
        get_store(), str(request.user.pk), tz=timezone.get_current_timezone()))
