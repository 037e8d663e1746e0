"""Discharge and cancel in a real browser: the chart's Discharge opens a confirmation that
lists every active order it will cancel (STAT and in-progress ones flagged), nothing is
cancelled before its button; Enter in the chart's cancel-reason box opens the cancel
confirmation instead of pressing "Ready". The discharge runs once, at 1024 px; its
confirmation is checked, and screenshotted, at 1024 and at 1440 px. Screenshots go to
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.persistence import queries
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def _stay(store, given: str, family: str) -> tuple[str, dict[str, str]]:
    pid = use_cases.register_patient(
        use_cases.RegisterPatient(given, family, date(1951, 4, 4), sex="female"),
        UnitOfWork(store),
        actor=SYSTEM_ACTOR,
    ).patient_id
    use_cases.admit_patient(
        use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"),
        UnitOfWork(store),
        actor=SYSTEM_ACTOR,
    )
    use_cases.record_no_known_allergies(  # asked before anything is prescribed
        use_cases.RecordNoKnownAllergies(pid), UnitOfWork(store), actor=SYSTEM_ACTOR
    )
    orders = {}
    for name, values in (
        ("crp", {"kind": "lab", "test_code": "CRP", "urgency": "stat"}),
        (
            "para",
            {
                "kind": "medication",
                "medication_code": "PARA",
                "dose": Decimal("1"),
                "unit": "g",
                "route": "PO",
                "frequency": "Q6H",
            },
        ),
        ("cxr", {"kind": "imaging", "modality": "CR", "body_part": "CHEST"}),
    ):
        orders[name] = use_cases.place_order(
            use_cases.PlaceOrder(patient_id=pid, **values), UnitOfWork(store), actor=SYSTEM_ACTOR
        ).order_id
    use_cases.progress_order(
        use_cases.ProgressOrder(pid, orders["crp"], "start"), UnitOfWork(store), actor=SYSTEM_ACTOR
    )  # STAT and in progress
    use_cases.progress_order(
        use_cases.ProgressOrder(pid, orders["para"], "start"), UnitOfWork(store), actor=SYSTEM_ACTOR
    )  # in progress
    return pid, orders


def test_a_clerk_reviews_the_orders_discharge_cancels_then_confirms(
    live_server,
    browser,  # noqa: F811
    make_user,
    his_store,
    reference_data,
    shots,
) -> None:
    pid, orders = _stay(his_store, "Dora", "Discharge")
    make_user("desk", "clerk")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    login(page, base, "desk")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#admissions input[type=submit]")  # the chart's Discharge: only opens it
    page.wait_for_selector("#discharge-confirm")
    assert {queries.order(his_store, pid, o)["status"] for o in orders.values()} == {
        "in_progress",
        "created",
    }  # nothing cancelled yet

    rows = page.locator("#discharge-orders tr.discharge-order")
    assert rows.count() == 3
    stat = page.locator(f"#discharge-orders tr[data-order='{orders['crp']}']")
    assert "order-stat" in stat.get_attribute("class")
    assert "order-in-progress" in stat.get_attribute("class")
    running = page.locator(f"#discharge-orders tr[data-order='{orders['para']}']")
    assert "order-in-progress" in running.get_attribute("class")
    plain = page.locator(f"#discharge-orders tr[data-order='{orders['cxr']}']")
    assert "order-flagged" not in plain.get_attribute("class")
    assert page.locator("#id_disposition option:checked").inner_text() != "care-home"
    page.select_option("#id_disposition", "care-home")
    page.fill("#id_note", "To Rosewood care home; GP letter sent.")
    for width in each_width(page):
        listed = page.inner_text("#discharge-orders")
        assert "3 active orders will be cancelled" in listed, width
        for described in ("C-reactive protein", "Paracetamol", "Chest"):
            assert described.lower() in listed.lower(), (width, described)
        assert stat.locator(".flag-stat").inner_text() == "STAT", width
        highlighted = stat.locator("td").first.evaluate(
            "e => getComputedStyle(e).backgroundColor")
        normal = plain.locator("td").first.evaluate("e => getComputedStyle(e).backgroundColor")
        assert highlighted != normal, width
        # The name must stay readable: the confirmation's content does not run off the page.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(shots / f"discharge-confirm-{width}.png"), full_page=True)

    page.click("#discharge-submit")
    page.wait_for_selector("text=Discharged (Care home).")
    assert {queries.order(his_store, pid, o)["status"] for o in orders.values()} == {"cancelled"}
    stay = queries.admissions(his_store, pid)[0]
    assert (stay["status"], stay["disposition"], stay["dischargeNote"]) == (
        "ended",
        "care-home",
        "To Rosewood care home; GP letter sent.",
    )


def test_enter_in_the_cancel_reason_box_does_not_press_ready(
    live_server,
    browser,  # noqa: F811
    make_user,
    his_store,
    reference_data,
    shots,
) -> None:
    pid, orders = _stay(his_store, "Cara", "Cancel")
    make_user("doctor", "clinician")
    base = live_server.url
    page = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
    login(page, base, "doctor")
    page.goto(f"{base}/admin/patients/{pid}/")
    row = page.locator(f"#orders tr.order-row:has(form[action*='{orders['cxr']}'])")
    row.locator("input[name=reason]").fill("Ordered on the wrong patient")
    row.locator("input[name=reason]").press("Enter")
    page.wait_for_selector("#order-cancel")
    assert queries.order(his_store, pid, orders["cxr"])["status"] == "created"  # not ready
    assert page.input_value("#id_reason") == "Ordered on the wrong patient"
    expect(page.locator("#cancel-diverted")).to_have_count(1)
    page.screenshot(path=str(shots / "order-cancel-1024.png"), full_page=True)
    page.click("#cancel-submit")
    page.wait_for_selector("text=Order cancelled")
    cancelled = queries.order(his_store, pid, orders["cxr"])
    assert (cancelled["status"], cancelled["cancelReason"]) == (
        "cancelled",
        "Ordered on the wrong patient",
    )
