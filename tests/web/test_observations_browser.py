"""Observations in a real browser: the bedside form typed with the keyboard alone (the
wristband scanned, the score shown as values are typed, Enter saves), the chart, and both
worklists, as a nurse and as a clinician; screenshots at 1024 and 1440 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.web.test_browser_flow import browser, login  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1024, 1440)


def _shots(page, name: str) -> None:
    folder = os.environ.get("SCREENSHOT_DIR")
    if not folder:
        return
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(Path(folder) / f"obs-{name}-{width}.png"), full_page=True)


def test_a_nurse_records_a_set_by_keyboard_and_a_clinician_sees_the_patient_at_risk(
        live_server, browser, make_user, admit, team, drain_worklists) -> None:  # noqa: F811
    pid = admit("Scorewell", bed="M101")
    mrn = team["nurse"].get(f"/api/v1/patients/{pid}").json()["mrn"]
    make_user("nora", "nurse")
    make_user("dr.kay", "clinician")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)

    login(page, base, "nora")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#record-observations")
    page.wait_for_selector("#news2-live")
    # the form's script runs once the page has loaded: an Enter before that is the
    # browser's own (it sends the form, which the server answers with its errors)
    page.wait_for_load_state("load")
    assert page.evaluate("document.activeElement.name") == "scanned_id"
    page.keyboard.type("X123")
    page.keyboard.press("Enter")
    expect(page.locator(".scan-result")).to_contain_text("Wrong patient")  # filled by the script
    page.keyboard.type(mrn)
    page.keyboard.press("Enter")
    expect(page.locator(".scan-result")).to_contain_text("Wristband matches")
    assert page.evaluate("document.activeElement.name") == "respiration_rate"
    # the paper chart's order, Tab between fields, type-ahead in the choices
    for keys in ("25", "93", "A", "", "", "105", "60", "112", "A"):
        if keys:
            page.keyboard.type(keys)
        page.keyboard.press("Tab")
    assert "incomplete (6 of 7" in page.inner_text("#news2-live")
    page.keyboard.type("38,3")
    live = page.inner_text("#news2-live")
    assert "NEWS2 9" in live and "High risk" in live  # before anything is saved
    assert page.inner_text("#score-respiration_rate") == "score 3"
    _shots(page, "form-nurse")
    page.keyboard.press("Enter")
    page.wait_for_selector(".messagelist")
    assert "NEWS2 9, high risk" in page.inner_text(".messagelist")
    [saved] = team["nurse"].get(f"/api/v1/patients/{pid}/observations").json()["items"][:1]
    assert float(saved["temperature"]) == 38.3  # the decimal comma typed, never 383
    assert "Not escalated" in page.inner_text("#observations")
    _shots(page, "chart-nurse")
    drain_worklists()
    page.goto(f"{base}/admin/worklists/observations-due/?ward=MED-1")
    page.wait_for_selector("table")
    assert "SCOREWELL" in page.inner_text("#content")
    _shots(page, "due-nurse")
    ctx.clear_cookies()

    login(page, base, "dr.kay")
    page.goto(f"{base}/admin/worklists/at-risk/?department=MED")
    page.wait_for_selector("table")
    text = page.inner_text("#content")
    assert "NEWS2 9 · High" in text and "Not escalated" in text and "first score" in text
    _shots(page, "at-risk-clinician")
    page.goto(f"{base}/admin/patients/{pid}/")
    expect(page.locator("#spo2-scale")).to_have_count(1)
    _shots(page, "chart-clinician")
    page.goto(f"{base}/admin/patients/{pid}/observations/new/")
    _shots(page, "form-clinician")
    for hour in range(40):  # a day and a half of hourly sets, as the chart must read them
        assert team["nurse"].post(f"/api/v1/patients/{pid}/observations", {
            "respiration_rate": 12 + hour % 15, "spo2": 90 + hour % 9,
            "on_oxygen": hour % 6 == 0, "systolic_bp": 95 + hour, "pulse": 60 + 2 * hour,
            "consciousness": "A" if hour % 10 else "C", "temperature": 36.0 + hour / 10,
            "taken_at": f"2026-11-{26 + hour // 24:02d}T{hour % 24:02d}:00:00+00:00"},
            content_type="application/json").status_code == 201
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#observation-chart")
    page.wait_for_selector("#obs-chart svg")
    expect(page.locator("#obs-chart svg")).to_have_count(2)
    _shots(page, "svg-chart-clinician")
    page.click("#print-chart")
    page.wait_for_selector(".obs-strip svg")
    _shots(page, "svg-print")
    assert not problems, problems  # no script or CSP error on any page
    ctx.close()
