"""My patients and the bed board name a patient's allergies; My patients says a handover
was acknowledged (not "None"); the lists show nurses no server timings. In a real browser,
screenshots at 1024 and 1440 px."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import RequestFactory
from django.utils import timezone
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.context import diagnostics
from hisadmin.core.actor import Actor
from patients.domain.shifts import Nurse, Shift, ShiftHours
from patients.use_cases.assignments import AssignNurses, assign_nurses
from patients.use_cases.beds import ward_entry
from tests.web.browser_shots import at_widths, named_user, signed_in
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
J = "application/json"
TIMING = r"/\(\d+(\.\d+)? ms\)/"


def test_allergies_are_named_and_a_taken_handover_says_so(
        live_server, browser, make_user, team, api_client, his_store, drain_worklists,  # noqa: F811
        shots) -> None:
    pid = team["clerk"].post("/api/v1/patients", {
        "given_name": "Zoë", "family_name": "Allergic-Müller", "birth_date": "1948-03-09"},
        content_type=J).json()["id"]
    for body in ({"allergen_code": "LATEX", "severity": "mild"},
                 {"allergen_code": "PENICILLINS", "reaction": "Anaphylaxis",
                  "severity": "severe", "criticality": "high"}):
        assert team["nurse"].post(f"/api/v1/patients/{pid}/allergies", body,
                                  content_type=J).status_code == 200
    assert team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M101", "reason": "Pneumonia"},
        content_type=J).status_code == 201
    dana = named_user(make_user, "dana", "Dana", "Day", "nurse")
    shift = Shift.at(datetime.now(UTC), ShiftHours.of_ward(ward_entry(his_store, "MED-1")),
                     timezone.get_current_timezone())
    assign_nurses(AssignNurses("MED-1", shift, {"M101": Nurse(str(dana.pk), "Dana Day")}),
                  UnitOfWork(his_store), actor=Actor(id="1", username="charge",
                                                     display_name="Charge",
                                                     roles=("charge_nurse",)))
    assert api_client("charge_nurse", "nurse").post(f"/api/v1/patients/{pid}/handovers", {
        "situation": "Stable", "background": "Pneumonia", "assessment": "Improving",
        "recommendation": "Wean oxygen", "shift": shift.name},
        content_type=J).status_code == 201
    drain_worklists()
    base = live_server.url
    ctx, page = signed_in(browser, base, "dana")

    page.goto(f"{base}/admin/wards/MED-1/")
    flag = page.inner_text("#bed-M101 .bed-flag")
    assert flag == "Allergies: Penicillins, Latex"  # named, the severe one first
    expect(page.locator(f"text={TIMING}")).to_have_count(0)
    at_widths(page, shots, "bed-board-allergies-named")

    page.goto(f"{base}/admin/worklists/my-patients/")
    row = page.locator("#result_list tbody tr").first
    assert "Allergies: Penicillins, Latex" in row.inner_text()
    assert "Open, from" in row.inner_text()
    expect(page.locator(f"text={TIMING}")).to_have_count(0)
    assert "updated" in page.inner_text(".freshness")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click(f"#acknowledge-{shift.name}")
    page.wait_for_selector(".messagelist")
    drain_worklists()
    page.goto(f"{base}/admin/worklists/my-patients/")
    row = page.locator("#result_list tbody tr").first
    assert "Acknowledged by Dana Day" in row.inner_text()
    assert row.locator("a", has_text="Acknowledged by Dana Day").get_attribute(
        "href").endswith("#handovers")
    at_widths(page, shots, "my-patients-acknowledged")
    ctx.clear_cookies()
    make_user("clara", "clerk")
    login(page, base, "clara")  # the clerk's board names them alike, without timings
    page.goto(f"{base}/admin/wards/MED-1/")
    assert page.inner_text("#bed-M101 .bed-flag") == "Allergies: Penicillins, Latex"
    expect(page.locator(f"text={TIMING}")).to_have_count(0)
    at_widths(page, shots, "bed-board-clerk")
    ctx.close()


def test_server_timings_are_for_admins(make_user) -> None:
    request = RequestFactory().get("/")
    request.user = make_user("ops", "admin")
    assert diagnostics(request) == {"show_timings": True}
    for role in ("nurse", "clinician", "clerk", "charge_nurse"):
        request.user = make_user(f"ward-{role}", role)
        assert diagnostics(request) == {"show_timings": False}
