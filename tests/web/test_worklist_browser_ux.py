"""A worklist in a real browser, as a ward clerk keeps it open all day: the table refreshes
every 2 s without losing keyboard focus or the scroll position; when the server cannot be
reached the indicator says so (and recovers by itself); once the session has ended, the next
refresh opens the login page, which leads back to the same list; printing gives the table
alone. Each flow runs once, at 1024 px; what the list shows, on screen and printed, is
checked and screenshotted at 1024 and at 1440 px. Screenshots go to ``$SCREENSHOT_DIR``
(default: the test's temporary directory)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from playwright.sync_api import expect

from testkit.fixtures import TEST_PASSWORD
from tests import worklist_data as data
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)
from worklists.pages.worklists import TABLE_MARKER

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIST = "/admin/worklists/admitted/?department=CARD"
TABLE = re.compile(r".*/admin/worklists/admitted/.*")
PATIENTS = 36  # more rows than a 700 px window shows: there is something to scroll


@pytest.fixture
def full_ward(his_store, reference_data, make_user, drain_worklists) -> None:
    make_user("desk", "clerk")
    for n in range(PATIENTS):
        pid = data.register(his_store, f"Patient{n:02d}", "Ann")
        data.admit(his_store, pid, "CARD", "CARD-A")
    drain_worklists()


@pytest.fixture
def open_list(live_server, browser, full_ward) -> Iterator:  # noqa: F811
    """``open_list(width)`` → a clerk's page showing the Cardiology census, with every
    request to another host recorded in ``page.outside`` and every message of the
    Content-Security-Policy in ``page.refused``."""
    contexts = []

    def open_(width: int):
        ctx = browser.new_context(viewport={"width": width, "height": 700})
        contexts.append(ctx)
        page = ctx.new_page()
        page.outside, page.refused = [], []
        page.on(
            "console",
            lambda m: page.refused.append(m.text) if "Content Security Policy" in m.text else None,
        )
        page.on(
            "request",
            lambda r: (
                page.outside.append(r.url)
                if not r.url.startswith(live_server.url) and not r.url.startswith("data:")
                else None
            ),
        )
        login(page, live_server.url, "desk")
        page.goto(live_server.url + LIST)
        page.wait_for_selector("#result_list tbody tr")
        # Counts the table's refreshes, to wait for them.
        page.evaluate("""() => { window.swaps = 0;
            document.addEventListener('htmx:afterSwap', () => { window.swaps += 1; }); }""")
        return page

    yield open_
    for ctx in contexts:
        ctx.close()


def _refreshes(page, n: int) -> None:
    start = page.evaluate("window.swaps")
    page.wait_for_function("n => window.swaps >= n", arg=start + n, timeout=15_000)


def _indicator(page) -> str:
    return page.inner_text("#worklist .freshness .age")



def test_it_keeps_focus_and_scroll_and_says_when_the_server_cannot_be_reached(
    open_list, shots: Path
) -> None:
    page = open_list(WIDTHS[0])
    links = page.locator("#result_list tbody a")
    assert links.count() == PATIENTS
    for width in each_width(page, height=700):
        page.screenshot(path=str(shots / f"worklist-{width}.png"))
        below = links.nth(25).evaluate("a => a.getBoundingClientRect().top > innerHeight")
        assert below, width  # the link focused below is not on the first screen
    links.nth(24).focus()
    page.keyboard.press("Tab")  # to the next patient's link, far down the table
    focused = page.evaluate("""() => { const a = document.activeElement;
        a.dataset.before = '1';  // the node a refresh replaces
        return {text: a.textContent, href: a.getAttribute('href'),
                inTable: !!a.closest('#result_list tbody')}; }""")
    assert focused["inTable"] and focused["href"] == links.nth(25).get_attribute("href")
    scrolled = page.evaluate("window.scrollY")
    assert scrolled > 0  # the link is below the first screen

    _refreshes(page, 2)
    now = page.evaluate("""() => { const a = document.activeElement;
        return {text: a.textContent, href: a.getAttribute('href'),
                replaced: a.dataset.before === undefined}; }""")
    assert now == {"text": focused["text"], "href": focused["href"], "replaced": True}
    assert page.evaluate("window.scrollY") == scrolled
    assert _indicator(page).startswith("updated ")
    for width in each_width(page, height=700):
        on_screen = page.evaluate("""() => { const r = document.activeElement
            .getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }""")
        assert on_screen, width  # the kept focus is in the window
        page.screenshot(path=str(shots / f"worklist-focus-kept-{width}.png"))

    def unreachable(route) -> None:
        if route.request.headers.get("hx-request"):
            route.abort()
        else:
            route.continue_()

    page.route(TABLE, unreachable)
    page.wait_for_function(
        """() => document.querySelector('#worklist .freshness .age')
        .textContent.startsWith('Cannot reach the server')""",
        timeout=15_000,
    )
    for width in each_width(page, height=700):
        said = _indicator(page)
        assert re.fullmatch(r"Cannot reach the server — last update \d+ s ago", said), width
        assert page.get_attribute("#worklist .freshness", "data-state") == "unreachable"
        page.screenshot(path=str(shots / f"worklist-unreachable-{width}.png"), full_page=True)
    assert page.evaluate("document.activeElement.getAttribute('href')") == focused["href"]

    page.unroute(TABLE)
    _refreshes(page, 1)
    assert _indicator(page).startswith("updated ")
    assert page.get_attribute("#worklist .freshness", "data-state") == "ok"

    def failing(route) -> None:
        if route.request.headers.get("hx-request"):
            route.fulfill(status=500, body="<h1>Server Error (500)</h1>")
        else:
            route.continue_()

    page.route(TABLE, failing)
    page.wait_for_function(
        """() => document.querySelector('#worklist .freshness .age')
        .textContent.startsWith('The server answered with an error (500)')""",
        timeout=15_000,
    )
    expect(page.locator("#result_list tbody a")).to_have_count(PATIENTS)  # the rows stay
    page.unroute(TABLE)
    _refreshes(page, 1)
    assert _indicator(page).startswith("updated ")
    assert page.outside == [] and page.refused == []


def test_a_refresh_after_logging_out_elsewhere_opens_the_login_page(live_server, open_list) -> None:
    page = open_list(1280)
    other = page.context.new_page()
    other.goto(live_server.url + "/admin/")
    other.click("#logout-form button")
    other.wait_for_selector("text=Log in again")

    page.wait_for_url(re.compile(r".*/admin/login/\?next=.*"), timeout=15_000)
    assert parse_qs(urlsplit(page.url).query)["next"] == [LIST]
    assert page.is_visible("#login-form") and not page.query_selector("#worklist")

    page.fill("#id_username", "desk")
    page.fill("#id_password", TEST_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#worklist #result_list")
    assert page.url.endswith(LIST)


def test_a_printed_worklist_is_the_table_alone(open_list, shots: Path) -> None:
    page = open_list(WIDTHS[0])
    page.select_option("#f-ward", "CARD-A")  # a filter applies at once
    page.wait_for_url(re.compile(r".*ward=CARD-A.*"))
    page.wait_for_selector("#result_list tbody tr")
    page.emulate_media(media="print")
    page.wait_for_function("() => document.querySelector('[data-data-age]').textContent !== ''")
    for width in each_width(page, height=700):
        page.emulate_media(media="print")
        for hidden in (
            "#header",
            "#nav-sidebar",
            ".breadcrumbs",
            "#toolbar",
            "#worklist .freshness .age",
            "#worklist .freshness .lag",
            "#footer",
        ):
            assert not page.is_visible(hidden), (hidden, width)
        assert page.locator(".worklist-print-filters span").all_inner_texts() == [
            "Department: Cardiology",
            "Ward: Cardiology Ward A",
            "Sorted by Ward / bed, ascending",
        ], width
        head = page.inner_text("#worklist-print-head")
        assert re.search(
            r"Printed .+ · data from \d\d:\d\d:\d\d \(\d+ s before printing\)", head
        ), width
        assert page.is_visible("#content h1") and page.is_visible("#result_list"), width
        expect(page.locator("#result_list tbody tr")).to_have_count(PATIENTS)
        page.screenshot(path=str(shots / f"worklist-print-{width}.png"), full_page=True)
        page.emulate_media(media="screen")
        assert not page.is_visible("#worklist-print-head"), width
        assert page.is_visible("#toolbar"), width


def test_the_table_answers_with_its_marker_and_the_page_without(full_ward, make_user) -> None:
    client = Client()
    client.force_login(make_user("desk", "clerk"))
    table = client.get(LIST, HTTP_HX_REQUEST="true")
    page = client.get(LIST)
    assert table[TABLE_MARKER] == "1" and TABLE_MARKER not in page
    assert "HX-Request" in table["Vary"] and "HX-Request" in page["Vary"]
    assert b'data-live-marker="X-Worklist-Table"' in page.content


def test_find_patients_invites_typing_before_anything_is_typed(full_ward, make_user) -> None:
    client = Client()
    client.force_login(make_user("desk", "clerk"))
    body = client.get("/admin/worklists/patients/").content.decode()
    assert "Nothing matches." not in body and "Type a name" in body
    assert (
        "Nothing matches." in client.get("/admin/worklists/patients/", {"q": "Zz"}).content.decode()
    )
