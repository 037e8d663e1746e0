"""The guards at the bedside on the chart's Administer and on Medications due's Record: each
warning with its own reason box, a reason too short refused on its field, a hard stop a form
error with no box; the override then shows, with who and why, on the order page, in the audit
trail and in the API (the order's and the MAR's administrations)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from hisadmin.core.inputs import hospital_time_zone

pytestmark = pytest.mark.django_db
J = "application/json"
GOOD = "Patient leaving for theatre, agreed with the ward doctor"
OVERRIDE_KEYS = {"check", "detail", "reason", "by", "at"}


@pytest.fixture
def nurse(make_user) -> Client:
    user = make_user("nurse-bedside", "nurse")
    user.first_name, user.last_name = "Nora", "Bedside"
    user.save()
    client = Client()
    client.force_login(user)
    return client


def prescribe(team: dict[str, Client], pid: str, **values: Any) -> str:
    placed = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
        "route": "PO", "frequency": "Q6H", **values}, content_type=J)
    assert placed.status_code == 201, placed.content
    oid = placed.json()["order_id"]
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{oid}/ready",
                              content_type=J).status_code == 200
    return oid


def later_slot(team: dict[str, Client], pid: str, oid: str) -> str:
    """A dose time more than two hours away (today or tomorrow, hospital time)."""
    today = datetime.now(hospital_time_zone()).date()
    for day in (today, today + timedelta(days=1)):
        mar = team["nurse"].get(f"/api/v1/patients/{pid}/mar?date={day.isoformat()}").json()
        for order in mar["orders"]:
            for slot in order["slots"] if order["order_id"] == oid else []:
                if datetime.fromisoformat(slot["scheduled_for"]) > datetime.now(UTC) + \
                        timedelta(hours=2):
                    return slot["slot_id"]
    raise AssertionError("no later dose time")


def administer_url(pid: str, oid: str) -> str:
    return f"/admin/patients/{pid}/orders/{oid}/administer/"


def test_an_early_dose_on_the_chart_warns_with_its_reason_box_and_records_the_override(
        team, admit, nurse) -> None:
    pid = admit("Early")
    oid = prescribe(team, pid)
    slot = later_slot(team, pid, oid)
    url = administer_url(pid, oid)
    form = nurse.get(url).context["form"]
    # the dose time chosen when the form asked which (no dose time is due now)
    fields = {"dose": "1000", "unit": "mg", "note": "", "slot_id": slot,
              "etag": form.initial["etag"]}
    warned = nurse.post(url, fields)
    assert warned.status_code == 200
    html = warned.content.decode()
    assert 'id="guard-warnings"' in html and 'data-check="early-dose"' in html
    assert 'name="override_early_dose"' in html and 'value="Record anyway"' in html
    assert "dose due" in html and "Please correct" not in html  # a warning, not an error
    guards = warned.context["guards"]
    assert [w["type"] for w in guards.warnings()] == ["early-dose"]
    signature = guards["signature"].value()

    short = nurse.post(url, {**fields, "signature": signature, "override_early_dose": "x"})
    assert short.status_code == 200
    assert "at least 10 characters" in " ".join(
        short.context["guards"].errors["override_early_dose"])
    changed = nurse.post(url, {**fields, "dose": "500", "signature": signature,
                               "override_early_dose": GOOD})  # a reason for another dose
    assert changed.status_code == 200 and not changed.context["guards"].errors
    assert changed.context["guards"]["override_early_dose"].value() == ""

    done = nurse.post(url, {**fields, "signature": signature, "override_early_dose": GOOD})
    assert done.status_code == 302 and done["Location"] == f"/admin/patients/{pid}/"
    assert "Dose given recorded: " in nurse.get(done["Location"]).content.decode()

    api = team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()
    [entry] = api["administrations"]
    assert entry["slot_id"] == slot
    [override] = entry["overrides"]
    assert set(override) == OVERRIDE_KEYS
    assert override["check"] == "early-dose" and override["reason"] == GOOD
    assert override["by"] == "nurse-bedside" and "early" in override["detail"]
    assert entry["override"] == override


def test_the_order_page_the_audit_trail_and_the_mar_api_show_each_override(
        team, admit, nurse) -> None:
    pid = admit("Shown")
    oid = prescribe(team, pid)
    slot = later_slot(team, pid, oid)
    recorded = team["nurse"].post(
        f"/api/v1/patients/{pid}/orders/{oid}/administrations",
        {"dose": "1000", "unit": "mg", "slot_id": slot, "overrides": {"early-dose": GOOD}},
        content_type=J)
    assert recorded.status_code == 201, recorded.content
    # a second dose straight after: early and too soon after the first, two reasons
    second = later_slot_after(team, pid, oid, slot)
    url = administer_url(pid, oid)
    etag = nurse.get(url).context["form"].initial["etag"]
    fields = {"dose": "1000", "unit": "mg", "note": "", "slot_id": second, "etag": etag}
    warned = nurse.post(url, fields)
    checks = [w["type"] for w in warned.context["guards"].warnings()]
    assert checks == ["early-dose", "dose-interval"]
    signature = warned.context["guards"]["signature"].value()
    half = nurse.post(url, {**fields, "signature": signature, "override_early_dose": GOOD})
    errors = half.context["guards"].errors
    assert "override_dose_interval" in errors and "override_early_dose" not in errors
    interval = "Second dose agreed after the first was vomited"
    done = nurse.post(url, {**fields, "signature": signature, "override_early_dose": GOOD,
                            "override_dose_interval": interval})
    assert done.status_code == 302

    page = nurse.get(f"/admin/patients/{pid}/orders/{oid}/").content.decode()
    administrations = page.split('id="order-administrations"')[1].split('id="order-history"')[0]
    assert administrations.count('class="dose-override" data-check="early-dose"') == 2
    assert 'data-check="dose-interval"' in administrations
    assert "Dose interval</strong> overridden by Nora Bedside" in administrations
    assert interval in administrations and "h between doses" in administrations
    history = page.split('id="order-history"')[1]
    assert f"early dose overridden by Nora Bedside: {GOOD}" in history
    assert f"dose interval overridden by Nora Bedside: {interval}" in history

    chart = nurse.get(f"/admin/patients/{pid}/").content.decode()
    audit = chart.split('id="audit"')[1]
    assert f"dose interval overridden by Nora Bedside: {interval}" in audit

    day = datetime.fromisoformat(_slot_time(second)).astimezone(hospital_time_zone()).date()
    mar = team["nurse"].get(f"/api/v1/patients/{pid}/mar?date={day.isoformat()}").json()
    [row] = [o for o in mar["orders"] if o["order_id"] == oid]
    [closed] = [s for s in row["slots"] if s["slot_id"] == second]
    given = closed["administration"]
    assert [o["check"] for o in given["overrides"]] == ["early-dose", "dose-interval"]
    assert all(set(o) == OVERRIDE_KEYS and o["by"] == "nurse-bedside"
               for o in given["overrides"])
    api = team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()
    assert [len(a["overrides"]) for a in api["administrations"]] == [1, 2]


def _slot_time(slot_id: str) -> str:
    """A slot id's dose time (``<order>.<YYYYMMDDTHHMM>Z``) as ISO text."""
    stamp = slot_id.rsplit(".", 1)[1]
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}+00:00"


def later_slot_after(team: dict[str, Client], pid: str, oid: str, after: str) -> str:
    """The order's next open dose time after ``after`` (today, tomorrow or the day after)."""
    today = datetime.now(hospital_time_zone()).date()
    for day in (today, today + timedelta(days=1), today + timedelta(days=2)):
        mar = team["nurse"].get(f"/api/v1/patients/{pid}/mar?date={day.isoformat()}").json()
        for order in mar["orders"]:
            for slot in order["slots"] if order["order_id"] == oid else []:
                if slot["slot_id"] > after and slot["administration"] is None:
                    return slot["slot_id"]
    raise AssertionError("no dose time after the first")


def test_a_day_above_the_hard_limit_is_a_form_error_with_no_reason_box(
        team, admit, nurse) -> None:
    pid = admit("Hard")
    oid = prescribe(team, pid, dose="2000", frequency="PRN", as_needed=True,
                    overrides={"dose-limit": "Loading dose agreed with pharmacy"})
    now = datetime.now(UTC)
    every = {"daily-dose": GOOD, "dose-interval": GOOD}
    for hours in (22, 17, 12, 7):  # 8000 mg in the last 24 hours: the hard daily limit
        r = team["nurse"].post(f"/api/v1/patients/{pid}/orders/{oid}/administrations", {
            "dose": "2000", "unit": "mg", "overrides": every,
            "administered_at": (now - timedelta(hours=hours)).isoformat()}, content_type=J)
        assert r.status_code == 201, r.content
    url = administer_url(pid, oid)
    etag = nurse.get(url).context["form"].initial["etag"]
    stopped = nurse.post(url, {"dose": "2000", "unit": "mg", "note": "", "etag": etag,
                               "signature": "whatever", "override_daily_dose": GOOD})
    assert stopped.status_code == 200
    html = stopped.content.decode()
    assert stopped.context["guards"] is None and 'id="guard-warnings"' not in html
    assert "cannot be overridden" in " ".join(stopped.context["form"].errors["dose"])
    assert "override_" not in html and 'value="Record"' in html
    api = team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()
    assert len(api["administrations"]) == 4  # nothing recorded


def test_medications_due_records_through_the_mar_form_and_its_warnings(
        team, admit, nurse, drain_worklists: Callable[[], None]) -> None:
    pid = admit("Duedose", bed="M104")
    prn = prescribe(team, pid, frequency="PRN", as_needed=True)
    now = datetime.now(UTC)
    for hours in (20, 14, 8, 2):  # 4000 mg of paracetamol today already
        r = team["nurse"].post(f"/api/v1/patients/{pid}/orders/{prn}/administrations", {
            "dose": "1000", "unit": "mg",
            "administered_at": (now - timedelta(hours=hours)).isoformat()}, content_type=J)
        assert r.status_code == 201, r.content
    oid = prescribe(team, pid, first_dose="now",
                    overrides={"duplicate-order": "Regular dose replaces the as-needed one"})
    drain_worklists()
    page = nurse.get("/admin/worklists/medications-due/", {"ward": "MED-1"}).content.decode()
    link = page.split(f"/admin/patients/{pid}/mar/{oid}/record/?slot=")[1].split('"')[0]
    url = f"/admin/patients/{pid}/mar/{oid}/record/?slot={link.replace('&amp;', '&')}"
    form = nurse.get(url).context["form"]
    fields = {"status": "given", "dose": "1000", "unit": "mg",
              "administered_at": form.initial["administered_at"].strftime("%Y-%m-%dT%H:%M"),
              "etag": form.initial["etag"], "reason": "", "note": ""}
    warned = nurse.post(url, fields)
    assert warned.status_code == 200
    assert [w["type"] for w in warned.context["guards"].warnings()] == ["daily-dose"]
    assert 'name="override_daily_dose"' in warned.content.decode()
    signature = warned.context["guards"]["signature"].value()
    done = nurse.post(url, {**fields, "signature": signature, "override_daily_dose": GOOD})
    assert done.status_code == 302
    api = team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()
    [entry] = api["administrations"]
    assert [o["check"] for o in entry["overrides"]] == ["daily-dose"]
