"""Recording a dose on the medication record in a real browser: the due slot's "Record" opens
the form prefilled with the ordered dose, submitting it turns the cell to Given. The flow runs
once at 1024 px; each page is looked at (and screenshotted) at 1024 and 1440 px. Screenshots
go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests.web.browser_shots import WIDTHS
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
HEIGHT = 900


@pytest.fixture
def on_the_ward(his_store, reference_data) -> tuple[str, str]:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Nils", "Dosett", date(1949, 9, 9), sex="male"), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Cellulitis",
                                                   bed="M106"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),  # asked
                                        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    midnight = now.replace(hour=0, minute=0)
    start = max(midnight, now - timedelta(minutes=20))  # a dose due now, today
    ids = []
    for values in ({"medication_code": "AMOX", "dose": Decimal("1"), "unit": "g",
                    "frequency": "Q8H", "start_at": start.isoformat(),
                    "first_dose": "now"},  # a dose time at the start, then 06/14/22
                   {"medication_code": "PARA", "dose": Decimal("1000"), "unit": "mg",
                    "frequency": "Q6H", "as_needed": True}):
        order = use_cases.place_order(use_cases.PlaceOrder(
            patient_id=pid, kind="medication", route="PO", **values), UnitOfWork(his_store),
            actor=SYSTEM_ACTOR)
        use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"),
                                 UnitOfWork(his_store), actor=SYSTEM_ACTOR)
        ids.append(order.order_id)
    return pid, ids[0]


def test_a_nurse_records_a_due_dose_with_one_click(live_server, browser, make_user,  # noqa: F811
                                                   on_the_ward, shots) -> None:
    pid, amox = on_the_ward
    make_user("nurse", "nurse")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": HEIGHT})
    page = ctx.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base)
            and not r.url.startswith("data:") else None)
    login(page, base, "nurse")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("a.mar-link")
    page.wait_for_url(f"{base}/admin/patients/{pid}/mar/")
    page.wait_for_selector("#mar-scheduled")  # is_visible does not wait for the page to load
    row = page.locator(f'#mar-scheduled tr[data-order="{amox}"]')
    due = row.locator('.mar-slot[data-status="due"]').first
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        expect(page.locator("#patient-banner")).to_be_visible()
        assert due.locator(".mar-status").inner_text() == "Due"
        page.screenshot(path=str(shots / f"mar-grid-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})

    due.locator("a.mar-record").click()
    assert page.input_value("#id_dose") == "1" and page.input_value("#id_unit") == "g"
    assert page.is_checked("#id_status_0")  # given
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        expect(page.locator("#patient-banner")).to_be_visible()
        page.screenshot(path=str(shots / f"mar-record-form-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.click("input[type=submit]")

    assert "Dose given recorded: " in page.inner_text("ul.messagelist")
    given = page.locator(f'#mar-scheduled tr[data-order="{amox}"] .mar-slot').first
    assert given.get_attribute("data-status") == "given"
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        assert given.locator(".mar-status").inner_text() == "Given"
        assert "1 g at" in given.inner_text() and "nurse" in given.inner_text()
        page.screenshot(path=str(shots / f"mar-given-{width}.png"), full_page=True)
    assert outside == []
    ctx.close()
