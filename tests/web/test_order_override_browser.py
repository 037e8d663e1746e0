"""The override dialog in a real browser: amoxicillin for a penicillin-allergic patient is
refused with a warning, a reason places it, the chart shows the override. The flow runs once
at 1024 px; each page is looked at (and screenshotted) at 1024 and 1440 px. Screenshots go to
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests.web.browser_shots import WIDTHS
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
HEIGHT = 900


@pytest.fixture
def allergic(his_store, reference_data) -> str:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Pia", "Penicillin", date(1958, 4, 2), sex="female"), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia",
                                                   bed="M103"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.add_allergy(use_cases.AddAllergy(pid, allergen_code="PENICILLINS",
                                               reaction="anaphylaxis", severity="severe"),
                          UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return pid


def test_an_allergy_warning_is_answered_with_a_reason(live_server, browser, make_user,  # noqa: F811
                                                      allergic, shots) -> None:
    make_user("doctor", "clinician")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": HEIGHT})
    page = ctx.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base)
            and not r.url.startswith("data:") else None)
    login(page, base, "doctor")
    page.goto(f"{base}/admin/patients/{allergic}/orders/new/medication/")

    for name in ("medication_code", "unit", "route", "frequency"):
        assert page.input_value(f"#id_{name}") == "", name  # nothing chosen for the doctor
    page.select_option("#id_medication_code", "AMOX")
    assert page.input_value("#id_unit") == "mg"  # proposed by the medication
    assert page.is_disabled("#id_route option[value=SC]")  # amoxicillin: PO or IV only
    page.fill("#id_dose", "500")
    page.select_option("#id_route", "PO")
    page.select_option("#id_frequency", "Q8H")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        assert "given oral or intravenous" in page.inner_text("#medication-hint")
        page.screenshot(path=str(shots / f"order-form-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.click("input[type=submit]")

    page.wait_for_selector("#order-warnings")
    assert page.input_value("#id_medication_code") == "AMOX"  # the same form, as entered
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        warning = page.inner_text("#order-warnings")
        assert "Allergy" in warning and "Penicillins" in warning and "anaphylaxis" in warning
        page.screenshot(path=str(shots / f"order-warning-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.fill("#id_override_allergy_conflict", "Tolerated amoxicillin in 2024, rash only")
    page.click("input[type=submit]")

    page.wait_for_selector("text=order placed")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        row = page.inner_text("#orders")
        assert "Amoxicillin 500 mg PO Q8H" in row
        assert "Overrode the allergy check" in row and "Tolerated amoxicillin in 2024" in row
        page.screenshot(path=str(shots / f"order-overridden-{width}.png"), full_page=True)
    assert outside == []  # every script and style from this app
    ctx.close()
