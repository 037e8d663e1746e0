"""The medication record keeps itself current in a real browser: a MAR left open shows a dose
a colleague recorded elsewhere as given without a reload, for a nurse and for a clinician;
its freshness line says when the server cannot be reached; the nurse's Record links of the
refreshed grid still open the form. The refresh is shortened to 1 s here (the page's
constant, ``MAR_REFRESH_SECONDS``). Each flow runs once, at 1024 px; what the grid and its
freshness line show is checked, and screenshotted, at 1024 and at 1440 px. Screenshots go to
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.pages import mar as mar_page
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)
from tests.web.test_mar_browser import on_the_ward  # noqa: F401  (a dose due now)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WAIT_MS = 15_000


@pytest.fixture
def quick(monkeypatch) -> None:
    """Refresh every second instead of every ten, so the test takes seconds."""
    monkeypatch.setattr(mar_page, "MAR_REFRESH_SECONDS", 1)


def _open(browser, base: str, user: str, pid: str):  # noqa: F811
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    login(page, base, user)
    page.goto(f"{base}/admin/patients/{pid}/mar/")
    page.wait_for_selector("#mar-live .freshness")
    page.evaluate("window.__notReloaded = true")  # gone if the page were loaded again
    return page


def _due(page, amox: str):
    return page.locator(f'#mar-scheduled tr[data-order="{amox}"] '
                        '.mar-slot[data-status="due"]').first



def _turns_given(page, slot_id: str) -> None:
    page.wait_for_selector(f'.mar-slot[data-slot-id="{slot_id}"][data-status="given"]',
                           timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")
    assert "updated" in page.inner_text("#mar-live .freshness")


def test_an_open_mar_shows_a_dose_recorded_elsewhere_as_given(
        live_server, browser, make_user, on_the_ward, his_store, quick,  # noqa: F811
        shots) -> None:
    pid, amox = on_the_ward
    make_user("nurse", "nurse")
    base = live_server.url
    page = _open(browser, base, "nurse", pid)
    assert page.get_attribute("#mar-live", "hx-trigger") == "every 1s"
    due = _due(page, amox)
    slot_id = due.get_attribute("data-slot-id")
    for width in each_width(page):
        assert due.locator(".mar-status").inner_text() == "Due", width

    # a colleague records the dose through the use case: the open grid turns it given
    use_cases.administer(use_cases.Administer(pid, amox, Decimal("1"), "g", slot_id=slot_id),
                         UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    _turns_given(page, slot_id)
    given = page.locator(f'.mar-slot[data-slot-id="{slot_id}"]')
    expect(given.locator("a.mar-record")).to_have_count(0)  # no second dose offered
    for width in each_width(page):
        assert given.locator(".mar-status").inner_text() == "Given", width
        assert "1 g at" in given.inner_text(), width
        page.screenshot(path=str(shots / f"mar-live-nurse-{width}.png"), full_page=True)

    # the server out of reach: the freshness line says so, and the grid recovers by itself
    refresh = re.compile(r"/mar/\?date=")
    page.route(refresh, lambda route: route.abort())
    page.wait_for_selector('#mar-live .freshness[data-state="unreachable"]', timeout=WAIT_MS)
    for width in each_width(page):
        assert "Cannot reach the server" in page.inner_text("#mar-live .freshness"), width
        page.screenshot(path=str(shots / f"mar-live-unreachable-{width}.png"),
                        full_page=True)
    page.unroute(refresh)
    page.wait_for_selector('#mar-live .freshness[data-state="ok"]', timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded === true")

    # the swapped-in grid's Record links still lead to the form (the PRN's here)
    page.locator("#mar-prn a.mar-record").first.click()
    page.wait_for_selector("#id_dose")
    assert page.input_value("#id_unit") == "mg"
    page.context.close()


def test_a_clinicians_open_mar_follows_a_nurse_recording_in_another_window(
        live_server, browser, make_user, on_the_ward, quick,  # noqa: F811
        shots) -> None:
    pid, amox = on_the_ward
    make_user("doctor", "clinician")
    make_user("nurse", "nurse")
    base = live_server.url
    watching = _open(browser, base, "doctor", pid)
    expect(watching.locator("#mar-live a.mar-record")).to_have_count(0)  # read only
    slot_id = _due(watching, amox).get_attribute("data-slot-id")

    nurse = _open(browser, base, "nurse", pid)
    nurse.locator(f'.mar-slot[data-slot-id="{slot_id}"] a.mar-record').click()
    nurse.click("input[type=submit]")
    assert "Dose given recorded: " in nurse.inner_text("ul.messagelist")
    nurse.context.close()

    _turns_given(watching, slot_id)
    expect(watching.locator("#mar-live a.mar-record")).to_have_count(0)
    for width in each_width(watching):
        watching.screenshot(path=str(shots / f"mar-live-clinician-{width}.png"),
                            full_page=True)
    watching.context.close()
