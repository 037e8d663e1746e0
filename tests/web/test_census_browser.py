"""The Midnight census page in a real browser: a fortnight of a ward around the spring clock
change, as a clerk (1024 px) and a nurse (1440 px), with screenshots to look at."""

from __future__ import annotations

import random
from datetime import date, timedelta

import pytest
import time_machine
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests import worklist_data as data
from tests.web.fixed_clock import london
from tests.web.test_browser_flow import browser, login  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIRST, DAYS = date(2026, 3, 20), 14  # Sunday 29 March has 23 hours in London


@pytest.fixture
def fortnight(his_store, reference_data, settings, drain_worklists):
    """Cardiology Ward A (8 beds): a few admissions a day, discharges, moves to the coronary
    care unit; the clock left at noon on the last day."""
    settings.HOSPITAL_TIME_ZONE = "Europe/London"
    rnd = random.Random(27)
    traveller = time_machine.travel(london(str(FIRST), "08:00"), tick=False)
    clock = traveller.start()
    inside: list[str] = []
    try:
        for n in range(DAYS):
            day = str(FIRST + timedelta(days=n))
            for clock_time in ("00:30", "09:15", "14:40"):
                if len(inside) < 8 and rnd.random() < 0.75:
                    clock.move_to(london(day, clock_time))
                    pid = data.register(his_store, f"Ward{n:02d}{clock_time[:2]}", "Ann")
                    data.admit(his_store, pid, "CARD", "CARD-A")
                    inside.append(pid)
            if inside and rnd.random() < 0.6:
                clock.move_to(london(day, "16:00"))
                data.discharge(his_store, inside.pop(0))
            if inside and rnd.random() < 0.25:
                clock.move_to(london(day, "18:30"))
                use_cases.transfer_patient(use_cases.TransferPatient(inside.pop(), "CARD-CCU"),
                                           UnitOfWork(his_store), actor=SYSTEM_ACTOR)
        clock.move_to(london(str(FIRST + timedelta(days=DAYS - 1)), "12:00"))
        drain_worklists()
        yield
    finally:
        traveller.stop()


@pytest.mark.parametrize(("role", "width"), [("clerk", 1024), ("nurse", 1440)])
def test_the_census_page_draws_the_fortnight_and_offers_its_csv(
        fortnight, live_server, browser, make_user, shots, role, width) -> None:  # noqa: F811
    make_user(f"census-{role}", role)
    ctx = browser.new_context(viewport={"width": width, "height": 1000})
    page = ctx.new_page()
    login(page, live_server.url, f"census-{role}")
    page.goto(f"{live_server.url}/admin/")
    page.get_by_role("link", name="Midnight census").first.click()
    page.select_option("#census-ward", "CARD-A")
    page.fill("#census-from", str(FIRST))
    page.fill("#census-to", str(FIRST + timedelta(days=DAYS - 1)))
    page.click("#census-form input[type=submit]")
    page.wait_for_selector("#census-table")
    chart = page.locator("svg.census-chart")
    assert chart.get_attribute("role") == "img"
    expect(page.locator("svg.census-chart rect[fill='url(#census-hatch)']")).to_have_count(DAYS)
    expect(page.locator("#census-table tbody tr")).to_have_count(DAYS)
    assert "Sun 29 Mar 2026" in page.locator("#census-table").inner_text()
    today = page.locator("#census-table tbody tr").last.inner_text()  # at 12:00
    assert "not yet" in today
    assert "Occupancy at midnight from" in page.locator("#census-summary").inner_text()
    page.screenshot(path=str(shots / f"census-{role}-{width}.png"), full_page=True)
    with page.expect_download() as download:
        page.click("#census-csv")
    lines = open(download.value.path(), encoding="utf-8").read().splitlines()
    assert lines[0].startswith("date,in_at_start_of_day") and len(lines) == DAYS + 1
    # A whole year: one bar a day, a label every few weeks, the values in the table only.
    page.fill("#census-from", str(FIRST + timedelta(days=DAYS - 366)))
    page.click("#census-form input[type=submit]")
    page.wait_for_selector("#census-table")
    expect(page.locator("#census-table tbody tr")).to_have_count(366)
    page.screenshot(path=str(shots / f"census-year-{role}-{width}.png"))
    ctx.close()
