"""The chart's Administer in a real browser when the guards stop a dose: each warning with its
own reason box, a reason too short refused on its field, good reasons record the dose and
the order page shows who overrode what and why. The flow runs once, at 1024 px; the warnings'
layout is checked, and each page photographed, at 1024 and 1440 px. Screenshots go to
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests.web.browser_shots import at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
GOOD = "Severe pain, agreed with the ward doctor by phone"
FLOW_WIDTH = 1024
# The widths looked at, the flow's last: each look ends back at the width the flow runs at.
LOOK_WIDTHS = (1440, FLOW_WIDTH)


@pytest.fixture
def given_often(his_store, reference_data) -> tuple[str, str]:
    """A patient on as-needed paracetamol, given four times in the last 20 hours, the last
    one an hour ago: one more now is too soon and passes the daily maximum."""
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Greta", "Guardwell", date(1951, 4, 4), sex="female"), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Hip fracture",
                                                   bed="M107"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    oid = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", medication_code="PARA", dose=Decimal("1000"),
        unit="mg", route="PO", frequency="PRN", as_needed=True), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).order_id
    use_cases.progress_order(use_cases.ProgressOrder(pid, oid, "ready"),
                             UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    now = datetime.now(UTC)
    for hours in (20, 15, 10, 1):
        use_cases.administer(use_cases.Administer(
            pid, oid, Decimal("1000"), "mg", administered_at=now - timedelta(hours=hours),
            overrides={"dose-interval": "Given as the pain came back"}),
            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return pid, oid


def test_the_charts_administer_shows_each_guard_with_its_reason_box(
        live_server, browser, make_user, given_often, shots) -> None:  # noqa: F811
    pid, oid = given_often
    user = make_user("nurse", "nurse")
    user.first_name, user.last_name = "Nina", "Ward"
    user.save()
    base = live_server.url
    ctx = browser.new_context(viewport={"width": FLOW_WIDTH, "height": 900})
    page = ctx.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base)
            and not r.url.startswith("data:") else None)
    login(page, base, "nurse")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click(f'a.administer-link[href*="{oid}"]')
    assert page.input_value("#id_dose") == "1000"
    page.click("input[type=submit]")

    box = page.locator("#guard-warnings")
    expect(box).to_be_visible()  # the form back, with its warnings
    checks = box.locator(".guard-warning")
    assert [checks.nth(i).get_attribute("data-check") for i in range(checks.count())] == [
        "dose-interval", "daily-dose"]
    assert page.input_value("input[type=submit]") == "Record anyway"
    for width in LOOK_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        expect(box).to_be_visible()
        assert "2 warnings to answer" in box.inner_text()
        assert "h between doses" in checks.nth(0).inner_text()
        assert "above the maximum daily dose" in checks.nth(1).inner_text()
        expect(page.locator("#id_override_dose_interval")).to_be_visible()
        expect(page.locator("#id_override_daily_dose")).to_be_visible()
        # the box sits inside the content, each reason box no wider than the page
        content = page.locator("#content-main").bounding_box()
        for field in ("#id_override_dose_interval", "#id_override_daily_dose"):
            rect = page.locator(field).bounding_box()
            assert rect["x"] >= content["x"] and rect["x"] + rect["width"] <= (
                content["x"] + content["width"] + 1)
        page.screenshot(path=str(shots / f"administer-warnings-{width}.png"), full_page=True)

    page.fill("#id_override_dose_interval", "too soon")
    page.fill("#id_override_daily_dose", GOOD)
    page.click("input[type=submit]")
    refused = page.locator('.guard-warning[data-check="dose-interval"] .errorlist')
    assert "at least 10 characters" in refused.inner_text()
    assert page.input_value("#id_override_daily_dose") == GOOD  # kept
    at_widths(page, shots, "administer-reason-refused", widths=LOOK_WIDTHS)

    page.fill("#id_override_dose_interval", "Pain score 9, second dose agreed by doctor")
    page.click("input[type=submit]")
    assert "Dose given recorded: " in page.inner_text("ul.messagelist")
    page.goto(f"{base}/admin/patients/{pid}/orders/{oid}/")
    overrides = page.locator("#order-administrations .dose-override")
    assert overrides.count() == 2  # the earlier doses were spaced: no guard fired
    last = page.locator("#order-administrations tr.dose-overrides").last  # under its dose
    assert "Daily dose overridden by Nina Ward" in last.inner_text()
    assert GOOD in last.inner_text()
    at_widths(page, shots, "administer-order-overrides", widths=LOOK_WIDTHS)
    assert outside == []
    ctx.close()
