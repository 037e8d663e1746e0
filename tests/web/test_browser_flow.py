"""A clinician's day in a real browser: register → admit → prescribe → administer → discharge."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from testkit.fixtures import TEST_PASSWORD
from tests.web.two_factor import give_code

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser(worker_browser: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The worker's chromium (``worker_browser``) for one test: every context the test opens
    is closed after it, so the next test starts with no cookies, storage or pages."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # playwright's loop, our ORM
    with worker_browser.in_use() as chromium:
        yield chromium


def login(page, base: str, user: str, password: str = TEST_PASSWORD) -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_selector("#content")
    if "/admin/two-factor/" in page.url:  # an admin: the authenticator app's code too
        give_code(page, user)


def test_it_walks_a_stay_from_registration_to_discharge(live_server, browser, make_user,
                                                         reference_data) -> None:
    for name, role in (("desk", "clerk"), ("doctor", "clinician"), ("ward", "nurse")):
        make_user(name, role)
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()

    login(page, base, "desk")
    page.goto(f"{base}/admin/patients/register/")
    page.fill("#id_given_name", "Lena")
    page.fill("#id_family_name", "Lindqvist")
    page.fill("#id_birth_date", "1961-03-09")
    page.click("input[type=submit]")
    page.wait_for_selector("#mrn")
    chart = page.url
    page.click("#admit-link")
    page.select_option("#id_department_id", "CARD")
    page.select_option("#id_ward_id", "CARD-A")
    page.wait_for_load_state("networkidle")  # the ward's free beds are offered (htmx)
    page.select_option("#id_bed", "A07")
    page.fill("#id_reason", "Atrial fibrillation")
    page.click("input[type=submit]")
    page.wait_for_selector("text=Admitted.")

    ctx.clear_cookies()
    login(page, base, "doctor")
    page.goto(chart)
    page.click("#nka-link")  # the allergies are asked before anything is prescribed
    page.click("#confirm-submit")
    page.wait_for_selector("text=No known allergies recorded.")
    page.click("#prescribe-link")
    page.select_option("#id_medication_code", "ENOX")
    page.fill("#id_dose", "40")
    page.select_option("#id_unit", "mg")
    page.select_option("#id_route", "SC")
    page.select_option("#id_frequency", "Q24H")
    page.check("input[name=first_dose][value=now]")  # given now, then at the standard time
    page.click("input[type=submit]")
    page.wait_for_selector("text=order placed")
    assert "Enoxaparin 40 mg SC Q24H" in page.inner_text("#orders")

    ctx.clear_cookies()
    login(page, base, "ward")
    page.goto(chart)
    page.click("#orders button[value=ready]")
    page.wait_for_selector("text=Order updated.")
    page.click("#orders .administer-link")
    page.fill("#id_dose", "40")
    page.select_option("#id_unit", "mg")
    page.click("input[type=submit]")
    page.wait_for_selector("text=Dose given recorded")
    assert page.inner_text("#orders .order-status") == "In progress"

    ctx.clear_cookies()
    login(page, base, "desk")
    page.goto(chart)
    page.select_option("#id_disposition", "home")
    page.click("#admissions input[type=submit]")  # opens the confirmation: nothing yet
    page.wait_for_selector("#discharge-orders")
    assert "Enoxaparin 40 mg SC Q24H" in page.inner_text("#discharge-orders")
    page.click("#discharge-submit")
    page.wait_for_selector("text=Discharged (Home).")
    assert page.inner_text("#orders .order-status") == "Cancelled"
    audit = page.inner_text("#audit")
    for event in ("Registered", "Admitted", "Medication prescribed", "Dose given",
                  "Order cancelled", "Discharged"):  # the events by name, not by code
        assert event in audit
