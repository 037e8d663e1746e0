"""Observations due and Patients at risk through the real use cases, the real projection
(drained from the change feed), the API and the pages; check and rebuild agree."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from worklists.ops import maintenance

pytestmark = pytest.mark.django_db
J = "application/json"
DUE = "/api/v1/worklists/observations-due"
AT_RISK = "/api/v1/worklists/at-risk"
MEDIUM = {"respiration_rate": 22, "spo2": 94, "on_oxygen": False, "systolic_bp": 120,
          "diastolic_bp": 80, "pulse": 115, "consciousness": "A", "temperature": 37.0}  # 5
HIGH = {**MEDIUM, "respiration_rate": 25, "temperature": "38,5"}  # 7


def _ago(**delta: int) -> str:
    return (datetime.now(UTC) - timedelta(**delta)).isoformat()


def _record(team: dict[str, Client], pid: str, values: dict, taken_at: str) -> str:
    r = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                           {**values, "taken_at": taken_at}, content_type=J)
    assert r.status_code == 201, r.content
    return r.json()["observation_id"]


def test_the_overdue_patient_comes_first_with_how_late(team, admit, drain_worklists) -> None:
    late = admit("Overdue", bed="M101")
    fine = admit("Fine", bed="M102")
    _record(team, late, MEDIUM, _ago(hours=2))  # hourly at medium: an hour late
    _record(team, fine, {**MEDIUM, "respiration_rate": 16, "spo2": 97, "pulse": 80},
            _ago(minutes=5))  # 0: due in 12 hours
    drain_worklists()
    items = team["nurse"].get(DUE, {"ward": "MED-1"}).json()["items"]
    mine = [i for i in items if i["patient_id"] in (late, fine)]
    assert [i["patient_id"] for i in mine] == [late, fine]
    assert mine[0]["overdue"] is True and 55 <= mine[0]["minutes_late"] <= 65
    assert mine[1]["overdue"] is False and mine[1]["score"] == 0


def test_a_patient_at_risk_shows_trend_and_not_escalated_until_told(
        team, admit, drain_worklists, make_user) -> None:
    pid = admit("Worse", bed="M103")
    _record(team, pid, MEDIUM, _ago(minutes=30))
    oid = _record(team, pid, HIGH, _ago(minutes=5))
    drain_worklists()
    [row] = [i for i in team["nurse"].get(AT_RISK, {"department": "MED"}).json()["items"]
             if i["patient_id"] == pid]
    assert (row["score"], row["risk"], row["previous_score"], row["trend"]) == (7, "high", 5, 2)
    assert row["escalated"] is False and row["observation_id"] == oid
    page = Client()
    page.force_login(make_user("risk-nurse", "nurse"))
    html = page.get("/admin/worklists/at-risk/?department=MED").content.decode()
    assert "NEWS2 7 · High" in html and "NEWS2 7 · High, up 2 from 5" in html and "Not escalated" in html
    assert team["nurse"].post(f"/api/v1/patients/{pid}/observations/{oid}/escalations", {
        "told_whom": "Outreach team", "response": "critical-care"},
        content_type=J).status_code == 201
    drain_worklists()
    [row] = [i for i in team["nurse"].get(AT_RISK, {"department": "MED"}).json()["items"]
             if i["patient_id"] == pid]
    assert row["escalated"] is True and row["escalation"]["told_whom"] == "Outreach team"
    due = page.get("/admin/worklists/observations-due/?ward=MED-1").content.decode()
    assert "Overdue by" in due or "Due" in due


def test_check_and_rebuild_agree_with_the_projection(team, admit, his_store,
                                                     drain_worklists) -> None:
    pid = admit("Rebuilt", bed="M104")
    oid = _record(team, pid, HIGH, _ago(minutes=10))
    team["nurse"].post(f"/api/v1/patients/{pid}/observations/{oid}/escalations", {
        "told_whom": "Dr A", "response": "plan"}, content_type=J)
    drain_worklists()
    report = maintenance.check(his_store, [pid])
    assert not report.drifted and not report.behind
    maintenance.rebuild(his_store, [pid])
    [row] = [i for i in team["nurse"].get(AT_RISK, {"department": "MED"}).json()["items"]
             if i["patient_id"] == pid]
    assert row["escalated"] is True and row["score"] == 7


def test_a_clerk_may_not_read_them(api_client) -> None:
    assert api_client("clerk").get(DUE, {"ward": "MED-1"}).status_code == 403
