"""The bed board's nurse select offers, per bed, "Same as last shift: <nurse>" (the whole
board keeps its button); the assignments API says the shift's hours in the hospital's zone.
In a real browser as the nurse in charge; screenshots at 1024 and 1440 px."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import hospital_time_zone
from patients.domain.shifts import Nurse, Shift, ShiftHours
from patients.use_cases.assignments import AssignNurses, assign_nurses
from patients.use_cases.beds import ward_entry
from tests.web.browser_shots import at_widths, named_user
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CHARGE = Actor(id="1", username="charge", display_name="Charge", roles=("charge_nurse",))


def test_one_bed_is_set_as_last_shift_from_its_select(live_server, browser, make_user,  # noqa: F811
                                                      admit, his_store, api_client,
                                                      shots) -> None:
    admit("Lastwell", bed="M101")
    named_user(make_user, "maria", "Maria", "Charge", "charge_nurse", "nurse")
    dana = named_user(make_user, "dana", "Dana", "Day", "nurse")
    nico = named_user(make_user, "nico", "Nico", "Night", "nurse")
    hours = ShiftHours.of_ward(ward_entry(his_store, "MED-1"))
    now = Shift.at(datetime.now(UTC), hours, timezone.get_current_timezone())
    assign_nurses(AssignNurses("MED-1", now.previous(), {
        "M101": Nurse(str(dana.pk), "Dana Day"), "M102": Nurse(str(nico.pk), "Nico Night")}),
        UnitOfWork(his_store), actor=CHARGE)
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1024, "height": 900})
    page = ctx.new_page()
    login(page, base, "maria")
    page.goto(f"{base}/admin/wards/MED-1/")
    options = page.locator("#nurse-M101 option").all_inner_texts()
    assert options[:2] == ["— nobody —", "Same as last shift: Dana Day"]
    expect(page.locator("#nurse-M103 option.same-as-last")).to_have_count(0)  # nobody then
    page.select_option("#nurse-M101", label="Same as last shift: Dana Day")
    page.locator("#shift-panel").scroll_into_view_if_needed()
    at_widths(page, shots, "bed-board-same-as-last")
    page.click("#save-assignments")
    page.wait_for_selector(".messagelist")
    assert "1 bed(s) have a nurse" in page.inner_text(".messagelist")
    assert page.input_value("#nurse-M101") == str(dana.pk)
    assert page.input_value("#nurse-M102") == ""  # only the bed asked for
    assert "Dana Day" in page.inner_text("#bed-M101")
    assert page.locator("#copy-last-shift").get_attribute("value") == (
        "Same as last shift, every bed")
    ctx.close()

    body = api_client("nurse").get(f"/api/v1/wards/MED-1/assignments?shift={now.name}").json()
    start, end = now.bounds(hours, hospital_time_zone())
    assert body["starts_at"] == start.isoformat() and body["ends_at"] == end.isoformat()
    assert datetime.fromisoformat(body["starts_at"]).utcoffset() == start.utcoffset()
    assert body["assignments"] == [{"bed": "M101", "nurse_id": str(dana.pk),
                                    "nurse_name": "Dana Day"}]
