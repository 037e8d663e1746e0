"""A clinician's day in a real browser: register → admit → prescribe → administer → discharge."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client

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


def login(page, base: str, user: str, password: str = TEST_PASSWORD, *,
          form: bool = False) -> None:
    """Signed in as ``user``, on the home page. The sign-in form is driven where signing
    in is what a test looks at (``form=True``), for an admin (the second step), and for a
    server of its own (``make run``'s). Otherwise the session is made on this process's
    server and its cookie handed to the browser: the form and its POST cost a second of
    the browser's time per sign-in, about a hundred times a run."""
    from django.contrib.auth import get_user_model

    from accounts.two_factor import needs_second_factor

    account = (None if form or password != TEST_PASSWORD or not _served_here(base)
               else get_user_model().objects.filter(username=user).first())
    if account is None or needs_second_factor(account):
        login_through_form(page, base, user, password)
        return
    session = Client()
    session.force_login(account)
    cookie = session.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base,
                               "httpOnly": True}])
    page.goto(f"{base}/admin/")
    page.wait_for_selector("#content")


def _served_here(base: str) -> bool:
    """Whether ``base`` is this process's live server (its sessions are this process's)."""
    from django.test.testcases import LiveServerThread

    port = urlsplit(base).port
    return any(isinstance(t, LiveServerThread) and t.port == port
               for t in threading.enumerate())


def login_through_form(page, base: str, user: str, password: str = TEST_PASSWORD) -> None:
    """Signed in through the sign-in form, as a person does (and the second step's code
    for an admin)."""
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_selector("#content")
    if "/admin/two-factor/" in page.url:  # an admin: the authenticator app's code too
        give_code(page, user)


def register_in_form(page, base: str, given: str, family: str, birth_date: str) -> str:
    """Register a patient through the form; returns the chart's address."""
    page.goto(f"{base}/admin/patients/register/")
    page.fill("#id_given_name", given)
    page.fill("#id_family_name", family)
    page.fill("#id_birth_date", birth_date)
    page.click("input[type=submit]")
    page.wait_for_selector("#mrn")
    return page.url


def choose_ward(page, department: str, ward: str) -> None:
    """From the chart, the Admit form with a department and ward chosen and its free beds
    offered (htmx)."""
    page.click("#admit-link")
    page.select_option("#id_department_id", department)
    page.select_option("#id_ward_id", ward)
    page.wait_for_load_state("networkidle")


def record_no_known_allergies(page) -> None:
    """On the chart: no known allergies, confirmed (asked before anything is prescribed)."""
    page.click("#nka-link")
    page.click("#confirm-submit")
    page.wait_for_selector("text=No known allergies recorded.")


def fill_prescription(page, code: str, dose: str, route: str, frequency: str, *,
                      unit: str = "", first_dose: str = "") -> None:
    """The Prescribe form's fields, as a clinician fills them (not sent)."""
    page.select_option("#id_medication_code", code)
    page.fill("#id_dose", dose)
    if unit:
        page.select_option("#id_unit", unit)
    page.select_option("#id_route", route)
    page.select_option("#id_frequency", frequency)
    if first_dose:
        page.check(f"input[name=first_dose][value={first_dose}]")


def test_it_walks_a_stay_from_registration_to_discharge(live_server, browser, make_user,
                                                         reference_data) -> None:
    for name, role in (("desk", "clerk"), ("doctor", "clinician"), ("ward", "nurse")):
        make_user(name, role)
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()

    login(page, base, "desk", form=True)  # the sign-in form, as a clerk uses it
    chart = register_in_form(page, base, "Lena", "Lindqvist", "1961-03-09")
    choose_ward(page, "CARD", "CARD-A")
    page.select_option("#id_bed", "A07")
    page.fill("#id_reason", "Atrial fibrillation")
    page.click("input[type=submit]")
    page.wait_for_selector("text=Admitted.")

    ctx.clear_cookies()
    login(page, base, "doctor")
    page.goto(chart)
    record_no_known_allergies(page)
    page.click("#prescribe-link")
    # given now, then at the standard time
    fill_prescription(page, "ENOX", "40", "SC", "Q24H", unit="mg", first_dose="now")
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
