"""Entering lab results in a real browser: the chart's "Enter results…" opens a form with one
field per analyte, a missing value stays on the form, the chart shows the values with H/L in
words, a clinician acknowledges. Each flow runs once, at 1024 px; the form and the chart are
screenshot at 1024 and 1440 px. Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's
temporary directory)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from tests.web.browser_shots import WIDTHS, at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DOCTOR = Actor(id="doc", username="orderer", display_name="Dr Orderer", roles=("clinician",))
NARROWEST_LAST = WIDTHS[::-1]  # screenshots the widest first: the flow goes on at the narrowest


def results_at_widths(page: Any, shots: Path, name: str) -> None:
    """The chart's results section, ``<name>-<width>.png``, at each width."""
    for width in NARROWEST_LAST:
        page.set_viewport_size({"width": width, "height": 900})
        page.locator("#results").screenshot(path=str(shots / f"{name}-{width}.png"))


@pytest.fixture
def lab_order(his_store, reference_data) -> tuple[str, str]:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Lars", "Labson", date(1949, 3, 9), sex="male"), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Fatigue", bed="M102"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    order = use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="lab",
                                                       test_code="CBC"),
                                  UnitOfWork(his_store), actor=DOCTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "start"),
                             UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return pid, order.order_id


def test_a_nurse_enters_lab_results_and_a_clinician_acknowledges(
        live_server, browser, make_user, lab_order, shots) -> None:  # noqa: F811
    """The results entered and acknowledged once at 1024 px; the form, the chart and the
    acknowledged results screenshot at 1024 and 1440 px."""
    pid, oid = lab_order
    make_user("ward-nurse", "nurse")
    make_user("doctor", "clinician")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = ctx.new_page()
    login(page, base, "ward-nurse")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("a.results-link")

    page.wait_for_selector("#patient-banner")
    assert "LABSON" in page.inner_text("#patient-banner").upper()
    labels = page.inner_text("#content-main form")
    assert "Haemoglobin (g/L)" in labels and "Reference range 130–175 g/L" in labels
    page.fill("input[name='results.HGB']", "118")
    page.fill("input[name='results.WBC']", "7.2")
    at_widths(page, shots, "results-form", widths=NARROWEST_LAST)
    page.click("input[type=submit]")
    page.wait_for_selector(".errornote")
    assert "Enter the platelets value." in page.inner_text("#content-main form")
    assert page.input_value("input[name='results.HGB']") == "118"  # kept as entered
    page.fill("input[name='results.PLT']", "520")
    page.click("input[type=submit]")

    page.wait_for_selector("#results .result")
    section = page.inner_text("#results")
    assert "Haemoglobin" in section and "118" in section and "L ↓ low" in section
    assert "H ↑ high" in section and "normal" in section
    assert "Completed" in page.inner_text("#orders")  # the status by its label
    at_widths(page, shots, "results-chart")
    ctx.close()

    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = ctx.new_page()
    login(page, base, "doctor")
    page.goto(f"{base}/admin/patients/{pid}/#results")
    page.click("#results button.acknowledge")
    page.wait_for_selector("#results .result-acknowledged")
    assert "Acknowledged by doctor" in page.inner_text("#results")
    results_at_widths(page, shots, "results-acknowledged")
    ctx.close()


def test_a_laboratorys_preliminary_and_corrected_results_on_the_chart(
        live_server, browser, make_user, lab_order, shots) -> None:  # noqa: F811
    """Results as the HL7 listener records them: a preliminary shown as not final (no
    acknowledge button), then a correction with the laboratory's range, flags, comments, a
    "<" value and the earlier results kept. Once at 1024 px; the results section screenshot
    at 1024 and 1440 px."""
    from decimal import Decimal

    from patients.domain.results import GivenValue

    pid, oid = lab_order
    lab = Actor(id="lab", username="lab-system", display_name="Laboratory", roles=("nurse",))
    make_user("doctor", "clinician")

    def record(status: str, hgb: str) -> None:
        use_cases.record_lab_results(use_cases.RecordLabResults(pid, oid, (
            GivenValue("HGB", Decimal(hgb), "g_l", lab_range="130-170", lab_flags=("L",),
                       comments=("Repeat in 24 h",)),
            GivenValue("WBC", Decimal("0.5"), comparator="<"),
            GivenValue("PLT", Decimal("450"))), status=status,
            observed_at="2026-01-01T10:30:00+00:00",
            comments=("Sample slightly haemolysed & re-spun",)), UnitOfWork(his_store_of()),
            actor=lab)

    from hisadmin.core.store import get_store

    def his_store_of():
        return get_store()

    record("preliminary", "118")
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = ctx.new_page()
    login(page, live_server.url, "doctor")
    page.goto(f"{live_server.url}/admin/patients/{pid}/#results")
    page.wait_for_selector("#results .result")
    section = page.inner_text("#results")
    assert "Preliminary: not final" in section and "The final result is awaited" in section
    expect(page.locator("#results button.acknowledge")).to_have_count(0)
    results_at_widths(page, shots, "results-preliminary")
    record("final", "121")
    record("final", "131")  # a new final after completion: a correction
    page.reload()
    page.wait_for_selector("#results .result")
    section = page.inner_text("#results")
    assert "Corrected" in section and "<0.5" in section and "130-170 (L)" in section
    assert "Repeat in 24 h" in section and "haemolysed & re-spun" in section
    expect(page.locator("#results button.acknowledge")).to_have_count(1)  # told again
    page.click("#results details.result-history summary")
    assert "Preliminary" in page.inner_text("#results details.result-history")
    results_at_widths(page, shots, "results-corrected")
    ctx.close()
