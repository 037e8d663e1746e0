"""The order page in a real browser: a clinician places amoxicillin over a penicillin allergy
with a note and a reason, a nurse marks it ready and gives a dose, and the order page (opened
from the chart's order list and from the audit trail) shows it all in words. The flow runs
once at 1024 px; the layout is checked and screenshots taken at 1024 and 1440 px, into
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NOTE = "Give with food; watch for a rash"
WIDTHS = (1024, 1440)


@pytest.fixture
def allergic(his_store, reference_data) -> str:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Oona", "Detail", date(1955, 2, 3), sex="female"), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.add_allergy(use_cases.AddAllergy(pid, allergen_code="PENICILLINS",
                                               reaction="rash", severity="moderate"),
                          UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return pid


def named(make_user, username: str, role: str, first: str, last: str) -> None:
    user = make_user(username, role)
    user.first_name, user.last_name = first, last
    user.save()


def test_an_order_placed_over_a_warning_and_given_reads_in_full(
        live_server, browser, make_user, allergic, shots) -> None:  # noqa: F811
    named(make_user, "doctor", "clinician", "Gregory", "House")
    named(make_user, "ward", "nurse", "Mary", "Seacole")
    base = live_server.url
    chart = f"{base}/admin/patients/{allergic}/"
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = ctx.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base)
            and not r.url.startswith("data:") else None)

    login(page, base, "doctor")
    page.goto(f"{base}/admin/patients/{allergic}/orders/new/medication/")
    page.select_option("#id_medication_code", "AMOX")
    page.fill("#id_dose", "500")
    page.select_option("#id_route", "PO")
    page.select_option("#id_frequency", "Q8H")
    page.check("input[name=first_dose][value=now]")  # given now, then at the standard times
    page.fill("#id_note", NOTE)
    page.click("input[type=submit]")
    page.wait_for_selector("#order-warnings")
    page.fill("#id_override_allergy_conflict", "Tolerated amoxicillin in 2024")
    page.click("input[type=submit]")
    page.wait_for_selector("text=order placed")
    assert f"Note: {NOTE}" in page.inner_text("#orders")  # the note is kept and shown

    ctx.clear_cookies()
    login(page, base, "ward")
    page.goto(chart)
    page.click("#orders button[value=ready]")
    page.wait_for_selector("text=Order updated.")
    page.click("#orders .administer-link")
    page.fill("#id_dose", "500")
    page.select_option("#id_unit", "mg")
    page.click("input[type=submit]")
    page.wait_for_selector("text=Dose given recorded")

    page.click("#orders a.order-link")  # from the chart's order list
    page.wait_for_selector("#order-fields")
    fields = page.inner_text("#order-fields")
    for said in ("Amoxicillin 500 mg PO Q8H", "In progress", "Routine", "500 milligram",
                 "Oral", "Every 8 hours", NOTE, "Gregory House", "Medical Ward 1"):
        assert said in fields, said
    overrides = page.inner_text("#order-overrides")
    assert "Allergy" in overrides and "Tolerated amoxicillin in 2024" in overrides
    assert "Gregory House" in overrides
    given = page.inner_text("#order-administrations")
    assert "Given" in given and "500 milligram" in given and "Mary Seacole" in given
    history = page.inner_text("#order-history")
    for said in ("Medication prescribed", "Order ready", "Dose given"):
        assert said in history, said
    for width in WIDTHS:  # the heading (banner with name and MRN) is not covered at either
        page.set_viewport_size({"width": width, "height": 900})
        banner = page.locator("#patient-banner").bounding_box()
        assert banner is not None and banner["x"] >= 0 and banner["x"] + banner["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width, width
        page.screenshot(path=str(shots / f"order-detail-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})

    page.goto(chart)  # and from the audit trail
    page.click("#audit a.audit-order-link >> nth=0")
    page.wait_for_selector("#order-fields")
    assert "Amoxicillin 500 mg PO Q8H" in page.inner_text("#order-description")
    page.goto(chart)
    for width in WIDTHS:  # no sideways scroll at either width
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth") <= width, width
        page.screenshot(path=str(shots / f"order-chart-{width}.png"), full_page=True)
    assert outside == []  # every script and style from this app
    ctx.close()
