"""A shift on the ward in a real browser: the nurse in charge assigns beds on the bed board,
a nurse sees My patients and writes a handover, the next nurse acknowledges it; screenshots
at 1280 and 1920 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.web.test_browser_flow import browser, login  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1280, 1920)


def _shots(page, name: str) -> None:
    folder = os.environ.get("SCREENSHOT_DIR")
    if not folder:
        return
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        page.screenshot(path=str(Path(folder) / f"{name}-{width}.png"), full_page=True)


def test_it_assigns_hands_over_and_takes_over(live_server, browser, make_user, admit,  # noqa: F811
                                              drain_worklists) -> None:
    pid = admit("Shiftwell", bed="M101")
    charge = make_user("maria", "charge_nurse", "nurse")
    charge.first_name, charge.last_name = "Maria", "Charge"
    charge.save()
    day_nurse = make_user("dana", "nurse")
    day_nurse.first_name, day_nurse.last_name = "Dana", "Day"
    day_nurse.save()
    make_user("nico", "nurse")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()

    login(page, base, "maria")
    page.goto(f"{base}/admin/wards/MED-1/")
    page.select_option("#nurse-M101", label="Dana Day")
    page.click("#save-assignments")
    page.wait_for_selector(".messagelist")
    assert "Assignments saved" in page.inner_text(".messagelist")
    page.wait_for_selector("#bed-M101 .bed-nurse")
    assert "Dana Day" in page.inner_text("#bed-M101")
    _shots(page, "bed-board-assigned")
    page.click("#shift-next")  # the next shift starts as this one: "Same as last shift"
    page.wait_for_selector("#assign-form")
    assert page.input_value("#nurse-M101") == ""
    page.click("#copy-last-shift")
    page.wait_for_selector(".messagelist")
    assert page.input_value("#nurse-M101") == str(day_nurse.pk)
    ctx.clear_cookies()
    drain_worklists()  # My patients is a projected view: the relay's work, done here

    login(page, base, "dana")
    page.goto(f"{base}/admin/worklists/my-patients/")
    page.wait_for_selector("table")
    assert "SHIFTWELL" in page.inner_text("#content")
    expect(page.locator("#toolbar")).to_have_count(0)  # no filters, so no Filter button
    expect(page.locator("#result_list td a", has_text="—")).to_have_count(0)  # no handover yet
    _shots(page, "my-patients")
    page.goto(f"{base}/admin/patients/{pid}/handovers/new/")
    page.fill("#id_situation", "Stable on oxygen 2 L")
    page.fill("#id_background", "Pneumonia, day 3 of antibiotics")
    page.fill("#id_assessment", "Improving; eating well")
    page.fill("#id_recommendation", "Try weaning oxygen at 10:00")
    _shots(page, "handover-form")
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector("#handovers .handover-note")
    assert "Not yet acknowledged" in page.inner_text("#handovers")
    expect(page.locator("#handovers input[type=submit]")).to_have_count(0)  # not her own
    page.goto(f"{base}/admin/wards/MED-1/handover/")
    assert "Try weaning oxygen" in page.inner_text("#handover-sheet")
    _shots(page, "handover-sheet")
    ctx.clear_cookies()

    login(page, base, "nico")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#handovers input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "Acknowledged by nico" in page.inner_text("#handovers")
    assert "Handover acknowledged" in page.inner_text("#audit")
    page.locator("#handovers").scroll_into_view_if_needed()
    _shots(page, "handover-acknowledged")
    ctx.close()
