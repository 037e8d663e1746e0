"""Observation worklists: Observations due (a ward, overdue first) and Patients at risk (a
department or ward, the highest NEWS2 first, with the trend and "not escalated"). Both are
the change feed's views, shown with the worklist pages' chrome, filters and refresh."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from hisadmin.core.local_time import span
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.domain.observations import RISK_LABELS, Risk
from worklists.pages.worklists import (
    PERSON,
    Column,
    Page,
    RowAction,
    _local,
    _per_department,
    _render,
    department_and_ward,
    ward_filter,
)
from worklists.read import queries


def _risk(r: dict[str, Any]) -> str:
    if r.get("score") is None:
        return "No score yet"
    return f"NEWS2 {r['score']} · {RISK_LABELS[Risk(r['risk'])]}"


def _late(r: dict[str, Any]) -> str:
    if r.get("overdue"):
        return "Overdue by " + span(int(r.get("minutesLate") or 0))
    due = datetime.fromisoformat(r["nextDueAt"])
    return "Due in " + span(int((due - datetime.now(UTC)).total_seconds() // 60))


def _trend(r: dict[str, Any]) -> str:
    trend = r.get("trend")
    if trend is None:
        return "first score"
    if trend == 0:
        return f"same as before ({r.get('previousScore')})"
    return f"{'up' if trend > 0 else 'down'} {abs(trend)} from {r.get('previousScore')}"


def _score_and_trend(r: dict[str, Any]) -> str:
    return f"{_risk(r)}, {_trend(r)}"


def _since(r: dict[str, Any]) -> str:
    taken = r.get("takenAt")
    if not taken:
        return "—"
    minutes = int((datetime.now(UTC) - datetime.fromisoformat(taken)).total_seconds() // 60)
    return f"{_local(taken)} ({span(minutes)} ago)"


def _escalated(r: dict[str, Any]) -> str:
    e = r.get("escalation")
    return f"Told {e.get('toldWhom')}, {_local(e.get('toldAt'))}" if e else "Not escalated"


def _record(r: dict[str, Any]) -> str:
    return reverse("admin:observations_new", args=[r["patientId"]])


BED = Column("Bed", lambda r: r.get("bed") or "—")
DUE_COLUMNS = [
    Column("Due at", lambda r: _local(r.get("nextDueAt"), with_date=True)),
    Column("Status", _late), BED, *PERSON, Column("Latest score", _risk),
    Column("Last set", lambda r: _local(r.get("lastTakenAt"), with_date=True)
           if r.get("lastTakenAt") else "None yet"),
]
AT_RISK_COLUMNS = [
    Column("Score and trend", _score_and_trend, "score"), Column("Escalation", _escalated),
    Column("Taken", _since, "taken"), Column("Bed", lambda r: r.get("bed") or "—", "bed"),
    *PERSON,
]


@requires("read_observation_worklists")
def observations_due(request: HttpRequest) -> HttpResponse:
    ward, choose = ward_filter(request)
    page = Page("Observations due", "worklist_obs_due", DUE_COLUMNS, [choose], None, "",
        [RowAction("Record", _record, "record_observations")],
        empty="No admitted patients on this ward.",
        intro="Every patient of the ward by when the next set is due from the last NEWS2 "
              "score (12-hourly at 0, 4-hourly when low, hourly at a single 3 or medium, "
              "every 30 minutes when high); overdue ones first.")
    if not ward:
        return _render(request, page, None, error="No wards are set up yet.")
    return _render(request, page, lambda token: queries.observations_due(get_store(), ward))


@requires("read_observation_worklists")
def at_risk(request: HttpRequest) -> HttpResponse:
    departments, department, ward, filters = department_and_ward(request)
    g = request.GET
    page = Page("Patients at risk", "worklist_at_risk", AT_RISK_COLUMNS, filters, None, "score",
        [RowAction("Escalate", lambda r: reverse(
            "admin:observations_escalate", args=[r["patientId"], r["observationId"]]),
            "escalate_observations", when=lambda r: not r.get("escalated"))],
        empty="No patient with a medium or high NEWS2 score, or a single 3.",
        intro="Patients whose latest NEWS2 is medium or high, or has a 3 in one parameter: "
              "the highest first, with the change since the set before, and “Not "
              "escalated” until someone records who was told.")
    return _render(request, page, _per_department(departments, department, lambda d: (
        queries.at_risk(d, ward=ward, sort=g.get("sort", "score"),
                        descending=g.get("dir") == "desc"))))
