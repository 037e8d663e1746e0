"""Shared ward computers in a real browser: an idle session warns, then ends (the worklist's
own refreshes do not keep it alive); five wrong passwords lock the login; an admin enrols an
authenticator app and gives its code at the next login; an admin sees who viewed a record.
Each flow runs once, at 1024 px; what each page shows is checked, and screenshotted, at 1024
and at 1440 px. Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary
directory)."""

from __future__ import annotations

import base64
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from django_otp.oath import TOTP
from playwright.sync_api import expect

from testkit.fixtures import TEST_PASSWORD
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def _login_with_next(url: str) -> bool:
    parts = urlsplit(url)
    return parts.path == "/admin/login/" and bool(parse_qs(parts.query).get("next"))


def test_an_idle_session_warns_then_ends_despite_the_worklist_refreshing(
    live_server,
    browser,  # noqa: F811
    make_user,
    reference_data,
    settings,
    shots,
) -> None:
    settings.IDLE_TIMEOUT_SECONDS = 14
    settings.IDLE_WARNING_SECONDS = 8
    make_user("desk", "clerk")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 800}).new_page()
    polls: list[str] = []
    page.on(
        "request",
        lambda r: polls.append(r.url) if r.headers.get("x-idle-passive") else None,
    )
    login(page, base, "desk")
    page.goto(f"{base}/admin/worklists/admitted/?department=MED")
    page.wait_for_selector("#idle-warning:not([hidden])", timeout=15_000)
    for width in each_width(page, height=800):  # resizing is not activity: the warning stays
        assert "You will be signed out in" in page.inner_text("#idle-warning"), width
        assert page.is_visible("#idle-stay"), width
        page.screenshot(path=str(shots / f"idle-warning-{width}.png"))

    page.click("#idle-stay")  # "Stay signed in" counts as activity
    page.wait_for_selector("#idle-warning", state="hidden", timeout=5_000)
    page.wait_for_selector("#idle-warning:not([hidden])", timeout=15_000)  # warned again
    started = time.monotonic()
    # The login page, with the list to come back to: idle.js leaves with "next" encoded
    # whole (%2F), the list's own refresh that met the login page reopens the list and
    # Django's redirect keeps its slashes; whichever came first (CI run AV: the second).
    page.wait_for_url(_login_with_next, timeout=20_000)
    assert time.monotonic() - started < 12
    assert polls, "the worklist refreshed itself meanwhile (tagged as not activity)"
    for width in each_width(page, height=800):
        assert "signed out after 14 seconds without activity" in page.inner_text("body"), width
        page.screenshot(path=str(shots / f"idle-signed-out-{width}.png"))
    # Logging in again leads back to the worklist.
    page.fill("#id_username", "desk")
    page.fill("#id_password", TEST_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/worklists/admitted/?department=MED")


def test_five_wrong_passwords_lock_the_login(
    live_server,
    browser,  # noqa: F811
    make_user,
    shots,
) -> None:
    make_user("rn-typo", "nurse")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 800}).new_page()
    for attempt in range(5):
        page.goto(f"{base}/admin/login/")
        page.fill("#id_username", "rn-typo")
        page.fill("#id_password", f"wrong-{attempt}")
        page.click("input[type=submit]")
    page.wait_for_selector("#locked-out")
    for width in each_width(page, height=800):
        assert "refused for 15 minutes" in page.inner_text("#content"), width
        page.screenshot(path=str(shots / f"login-locked-{width}.png"))
    login_again = page.goto(f"{base}/admin/login/")
    assert login_again is not None and login_again.status == 200
    page.fill("#id_username", "rn-typo")
    page.fill("#id_password", TEST_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#locked-out")  # the right password too, for now


def totp_code(secret: str, step: int = 0) -> str:
    key = base64.b32decode(secret.replace(" ", "") + "=" * (-len(secret.replace(" ", "")) % 8))
    totp = TOTP(key)
    totp.time = time.time() + 30 * step
    return f"{totp.token():06d}"


def test_an_admin_enrols_an_app_then_needs_its_code(
    live_server,
    browser,  # noqa: F811
    make_user,
    shots,
) -> None:
    make_user("boss", "admin")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", TEST_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("text=Set up two-step login")
    for width in each_width(page, height=900):
        assert page.locator("img.his-totp-qr").evaluate("img => img.naturalWidth") > 0, width
        assert page.is_visible("img.his-totp-qr"), width
        page.screenshot(path=str(shots / f"2fa-enrol-{width}.png"), full_page=True)
    secret = page.inner_text("#totp-secret")
    page.fill("#id_code", "000000" if totp_code(secret) != "000000" else "111111")
    page.click("input[type=submit]")
    page.wait_for_selector(".errorlist")
    for width in each_width(page, height=900):
        assert page.is_visible(".errorlist"), width
        page.screenshot(path=str(shots / f"2fa-wrong-code-{width}.png"), full_page=True)
    time.sleep(1.1)  # a wrong code makes the next wait a second
    page.fill("#id_code", totp_code(secret))
    page.click("input[type=submit]")
    page.wait_for_selector("text=Who viewed a record")  # the admin's home page

    page.click("#logout-form button")
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", TEST_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("text=Enter the code your authenticator app shows")
    expect(page.locator("#totp-secret")).to_have_count(0)
    for width in each_width(page, height=900):
        assert "Enter the code your authenticator app shows" in page.inner_text("body"), width
        page.screenshot(path=str(shots / f"2fa-code-{width}.png"), full_page=True)
    page.goto(f"{base}/admin/")  # nothing is reachable before the code
    assert "/admin/login/" in page.url
    page.go_back()
    page.fill("#id_code", totp_code(secret, 1))  # the code just used is not taken twice
    page.click("input[type=submit]")
    page.wait_for_selector("text=Who viewed a record")


def test_an_admin_sees_who_viewed_a_record(
    live_server,
    browser,  # noqa: F811
    make_user,
    admit,
    shots,
) -> None:
    pid = admit("Looked-At", given="Lena")
    make_user("ward", "nurse")
    make_user("privacy", "nurse", "admin")  # a charge nurse who is also an admin
    base = live_server.url
    nurse = browser.new_context(viewport={"width": WIDTHS[0], "height": 800}).new_page()
    login(nurse, base, "ward")
    nurse.goto(f"{base}/admin/patients/{pid}/")
    nurse.goto(f"{base}/admin/patients/{pid}/mar/")
    expect(nurse.locator("#access-log-link")).to_have_count(0)

    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 800}).new_page()
    login(page, base, "privacy")  # with the authenticator code: an admin
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#access-log-link")
    page.wait_for_selector("#access-log")
    rows = page.locator("#access-log tr.access-row")
    texts = [rows.nth(i).inner_text() for i in range(rows.count())]
    assert any("ward" in t and "Medication record" in t and "Page" in t for t in texts), texts
    assert any("ward" in t and "Chart" in t for t in texts), texts
    for width in each_width(page, height=800):
        assert "LOOKED-AT, Lena" in page.inner_text("#access-patient"), width
        assert page.is_visible("#access-log"), width
        page.screenshot(path=str(shots / f"access-log-{width}.png"), full_page=True)
