"""Medications due opens on the nurse's ward and brings her back to it: the ward the shift's
assignments give her (else the one she chose last, else last shift's), not the first
alphabetically; Record from the list returns to the list, and only to a page of this site.
Screenshots at 1024 and 1440 px."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.shifts import Nurse, Shift, ShiftHours
from patients.use_cases.assignments import AssignNurses, assign_nurses
from patients.use_cases.beds import ward_entry
from tests.web.browser_shots import at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)
from tests.web.test_due_review_browser import ward_day  # noqa: F401  (a dose due on MED-1)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DUE = "/admin/worklists/medications-due/"
CHARGE = Actor(id="77", username="charge", display_name="Charge Nurse",
               roles=("charge_nurse",))


def _assign(store, user, ward: str, bed: str, *, last_shift: bool = False) -> None:
    hours = ShiftHours.of_ward(ward_entry(store, ward))
    shift = Shift.at(datetime.now(UTC), hours, timezone.get_current_timezone())
    assign_nurses(AssignNurses(
        ward, shift.previous() if last_shift else shift,
        {bed: Nurse(str(user.pk), user.get_username())}), UnitOfWork(store), actor=CHARGE)


def _ward_shown(page) -> str:
    return page.eval_on_selector("#changelist-filter select[name=ward], select[name=ward]",
                                 "s => s.value")


def test_it_opens_on_her_assigned_ward_and_comes_back_after_record(
        live_server, browser, ward_day, his_store, make_user, drain_worklists,  # noqa: F811
        shots) -> None:
    nurse = get_user_model().objects.get(username="nurse")
    _assign(his_store, nurse, "MED-1", "M104")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1024, "height": 800})
    page = ctx.new_page()
    login(page, base, "nurse")
    page.goto(f"{base}{DUE}")
    assert _ward_shown(page) == "MED-1"  # not Cardiology, the first alphabetically
    row = page.locator("#result_list tbody tr").first
    assert "DUELIST, Vera" in row.inner_text()
    at_widths(page, shots, "meds-due-assigned", height=800)
    row.locator("a.button", has_text="Record").click()
    expect(page.locator(".mar-record-for a", has_text="Back to the list")).to_have_count(1)
    at_widths(page, shots, "record-from-meds-due", height=800)
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector("ul.messagelist")
    assert "Dose given recorded: 1 g at" in page.inner_text("ul.messagelist")
    assert page.url.startswith(f"{base}{DUE}") and "ward=MED-1" in page.url
    assert _ward_shown(page) == "MED-1"
    at_widths(page, shots, "meds-due-back", height=800)
    ctx.close()


def test_without_beds_this_shift_it_opens_on_her_last_choice_or_last_shifts_ward(
        live_server, browser, his_store, reference_data, make_user) -> None:  # noqa: F811
    make_user("chooser", "nurse")
    yesterday = make_user("nightly", "nurse")
    _assign(his_store, yesterday, "SURG-1", "S101", last_shift=True)
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1440, "height": 800})
    page = ctx.new_page()
    login(page, base, "chooser")
    page.goto(f"{base}{DUE}")
    assert _ward_shown(page) == "CARD-A"  # nothing known about her: the first
    page.goto(f"{base}{DUE}?ward=MED-2")
    page.goto(f"{base}{DUE}")
    assert _ward_shown(page) == "MED-2"  # her last choice
    ctx.clear_cookies()
    login(page, base, "nightly")
    page.goto(f"{base}{DUE}")
    assert _ward_shown(page) == "SURG-1"  # where she worked last shift
    ctx.close()


def test_record_goes_back_only_to_a_page_of_this_site(client, ward_day) -> None:  # noqa: F811
    client.force_login(get_user_model().objects.get(username="nurse"))
    record = client.get(f"{DUE}?ward=MED-1")
    assert record.status_code == 200
    mar = f"/admin/patients/{ward_day['pid']}/mar/"
    page = client.get(f"/admin/patients/{ward_day['pid']}/mar/{ward_day['amox']}/record/",
                      {"next": "https://elsewhere.example/phish"})
    assert page.status_code == 200
    assert b"elsewhere.example" not in page.content and mar.encode() in page.content
