"""A stopped order on the MAR page, in a real browser: a dose given a little early and the
order cancelled before the dose's time keeps its dose time, with the dose in it. The clock is
put at 23:50, so the dose time is after midnight and the stop before it: the next day's MAR
still shows the row. Screenshots at 1024 and 1440 px, as the nurse."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import hospital_time_zone
from patients import use_cases
from tests.web.browser_shots import at_widths
from tests.web.fixed_clock import fixed_clock  # noqa: F401
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_cancelled_orders_given_dose_stays_in_its_slot(live_server, browser, his_store,  # noqa: F811
                                                         reference_data, make_user,
                                                         shots, fixed_clock) -> None:  # noqa: F811
    fixed_clock("2026-06-10", "23:50")
    nurse = make_user("nurse", "nurse")
    by_nurse = Actor(id=str(nurse.pk), username="nurse", display_name="Nurse",
                     roles=("nurse",))
    doctor = Actor(id="8", username="drwho", display_name="Dr Who", roles=("clinician",))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Stopwell", "Ida", date(1950, 5, 5)), UnitOfWork(his_store), actor=by_nurse).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pain", bed="M107"),
                            UnitOfWork(his_store), actor=by_nurse)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=doctor)
    now = datetime.now(UTC)
    soon = now.replace(second=0, microsecond=0) + timedelta(minutes=20)
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", medication_code="IBU", dose=Decimal("400"),
        unit="mg", route="PO", frequency="Q8H", start_at=soon.isoformat(), first_dose="now"),
        UnitOfWork(his_store), actor=doctor)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"),
                             UnitOfWork(his_store), actor=by_nurse)
    use_cases.administer(use_cases.Administer(
        pid, order.order_id, Decimal("400"), "mg", scheduled_for=soon.isoformat(),
        administered_at=now.isoformat()), UnitOfWork(his_store), actor=by_nurse)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "cancel",
                                                     reason="Gastric pain after the dose"),
                             UnitOfWork(his_store), actor=doctor)

    ctx = browser.new_context(viewport={"width": 1024, "height": 900})
    page = ctx.new_page()
    login(page, live_server.url, "nurse")
    day = soon.astimezone(hospital_time_zone()).date()
    page.goto(f"{live_server.url}/admin/patients/{pid}/mar/?date={day}")
    row = page.locator(f'#mar-scheduled tr[data-order="{order.order_id}"]')
    expect(row).to_contain_text("Cancelled")
    slot = row.locator(".mar-slot")
    expect(slot).to_have_count(1)
    assert slot.get_attribute("data-status") == "given"
    assert slot.get_attribute("data-slot") == soon.astimezone(UTC).isoformat()
    assert "400 mg" in slot.inner_text()
    assert "No dose time of this order falls on this day" not in row.inner_text()
    at_widths(page, shots, "mar-stopped-order")
    ctx.close()
