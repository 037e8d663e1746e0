"""The ward's "Medications due" and the clinician's "Results to review" in a real browser:
a nurse goes from a due dose to its recording form in one click, and the dose leaves the
list; a clinician acknowledges a result from the list and it leaves. Each flow runs once, at
1024 px; the lists are screenshot at 1024 and 1440 px. Screenshots go to ``$SCREENSHOT_DIR``
(default: the test's temporary directory)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients import use_cases
from patients.domain.results import GivenValue
from tests.web.browser_shots import WIDTHS, at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NARROWEST_LAST = WIDTHS[::-1]  # screenshots the widest first: the flow goes on at the narrowest


@pytest.fixture
def ward_day(his_store, reference_data, make_user, drain_worklists) -> dict[str, str]:
    """A patient on MED-1 with a dose due now, and a CBC the clinician ordered, resulted."""
    nurse = make_user("nurse", "nurse")
    doctor = make_user("doctor", "clinician")
    by_doctor = Actor(id=str(doctor.pk), username="doctor", display_name="Dr Doctor",
                      roles=("clinician",))
    by_nurse = Actor(id=str(nurse.pk), username="nurse", display_name="Nurse",
                     roles=("nurse",))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Vera", "Duelist", date(1950, 5, 5), sex="female"), UnitOfWork(his_store),
        actor=by_nurse).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Sepsis", bed="M104"),
                            UnitOfWork(his_store), actor=by_nurse)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),  # asked
                                        UnitOfWork(his_store), actor=by_nurse)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    start = max(now.replace(hour=0, minute=0), now - timedelta(minutes=15))
    amox = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", medication_code="AMOX", dose=Decimal("1"),
        unit="g", route="PO", frequency="Q8H", start_at=start.isoformat(),
        first_dose="now"),  # a dose time at the start: due now
        UnitOfWork(his_store), actor=by_doctor)
    use_cases.progress_order(use_cases.ProgressOrder(pid, amox.order_id, "ready"),
                             UnitOfWork(his_store), actor=by_nurse)
    cbc = resulted_cbc(his_store, pid, by_doctor, by_nurse)
    drain_worklists()
    return {"pid": pid, "amox": amox.order_id, "cbc": cbc}


def resulted_cbc(his_store, pid: str, ordered_by: Actor, resulted_by: Actor, *,
                 wbc: str = "7") -> str:
    """A full blood count ``ordered_by`` placed, started and resulted (haemoglobin low): a
    row of their Results to review. Its order id."""
    cbc = use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="lab",
                                                     test_code="CBC"),
                                UnitOfWork(his_store), actor=ordered_by)
    use_cases.progress_order(use_cases.ProgressOrder(pid, cbc.order_id, "start"),
                             UnitOfWork(his_store), actor=resulted_by)
    use_cases.complete_order(use_cases.CompleteOrder(pid, cbc.order_id, results=(
        GivenValue("HGB", Decimal("95")), GivenValue("WBC", Decimal(wbc)),
        GivenValue("PLT", Decimal("250")))), UnitOfWork(his_store), actor=resulted_by)
    return cbc.order_id


def test_a_nurse_answers_a_due_dose_from_the_ward_list(live_server, browser, ward_day,  # noqa: F811
                                                       drain_worklists, shots) -> None:
    """The dose answered once at 1024 px; the list screenshot at 1024 and 1440 px."""
    base = live_server.url
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 800})
    page = ctx.new_page()
    login(page, base, "nurse")
    page.goto(f"{base}/admin/worklists/medications-due/?ward=MED-1")
    row = page.locator("#result_list tbody tr").first
    assert "DUELIST, Vera" in row.inner_text() and "Due" in row.inner_text()
    at_widths(page, shots, "medications-due", height=800, widths=NARROWEST_LAST)
    row.locator("a.button", has_text="Record").click()
    expect(page.locator("#patient-banner")).to_be_visible()
    assert page.input_value("#id_dose") == "1"
    page.click("input[type=submit]")
    assert "Dose given recorded: " in page.inner_text("ul.messagelist")
    drain_worklists()
    page.goto(f"{base}/admin/worklists/medications-due/?ward=MED-1")
    assert "No doses due" in page.inner_text("#result_list")
    ctx.close()


def test_a_clinician_acknowledges_a_result_from_the_list(live_server, browser, ward_day,  # noqa: F811
                                                         drain_worklists, shots) -> None:
    """The result acknowledged and corrected once at 1024 px; the list screenshot at 1024 and
    1440 px, before and after the correction."""
    base = live_server.url
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 800})
    page = ctx.new_page()
    login(page, base, "doctor")
    page.goto(f"{base}/admin/worklists/results-to-review/")
    row = page.locator("#result_list tbody tr").first
    assert "DUELIST, Vera" in row.inner_text()
    assert "Abnormal: Haemoglobin 95 g/L, low" in row.inner_text()
    at_widths(page, shots, "results-to-review", height=800, widths=NARROWEST_LAST)
    row.locator("button", has_text="Acknowledge").click()
    assert "Results acknowledged." in page.inner_text("ul.messagelist")
    assert page.url.endswith("/admin/worklists/results-to-review/")
    drain_worklists()
    page.reload()
    assert "No results waiting for your review." in page.inner_text("#result_list")
    # the laboratory corrects it (a new final through HL7): the clinician is told again
    lab = Actor(id="lab", username="lab-system", display_name="Laboratory", roles=("nurse",))
    from hisadmin.core.store import get_store

    use_cases.record_lab_results(use_cases.RecordLabResults(ward_day["pid"], ward_day["cbc"], (
        GivenValue("HGB", Decimal("125")), GivenValue("WBC", Decimal("7")),
        GivenValue("PLT", Decimal("250")))), UnitOfWork(get_store()), actor=lab)
    drain_worklists()
    page.reload()
    row = page.locator("#result_list tbody tr").first
    assert "DUELIST, Vera" in row.inner_text()
    assert "Corrected: Abnormal: Haemoglobin 125 g/L" in row.inner_text()
    at_widths(page, shots, "results-to-review-corrected", height=800)
    ctx.close()
