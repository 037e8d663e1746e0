"""The admin pages that guard privileges, in a real browser as an administrator who is not a
superuser: a user's change form shows superuser and staff status read-only and offers only
the ward roles; a token's page names its user without a field to change it and lists its
security events. The flow runs once at 1024 px; each page is looked at (and screenshotted)
at 1024 and 1440 px. Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary
directory)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from hisadmin.models import ApiToken
from tests.web.browser_shots import WIDTHS, at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
HEIGHT = 900


def test_an_admin_who_is_not_a_superuser_sees_privileges_read_only(
        live_server, browser, make_user, tmp_path) -> None:  # noqa: F811
    office = make_user("office-admin", "admin")
    nurse = make_user("ward-nurse", "nurse")
    token, _ = ApiToken.issue(office, "own script")
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": HEIGHT}).new_page()
    login(page, live_server.url, "office-admin")

    page.goto(f"{live_server.url}/admin/auth/user/{nurse.pk}/change/")
    expect(page.locator("input[name=is_superuser]")).to_have_count(0)
    expect(page.locator("input[name=is_staff]")).to_have_count(0)
    offered = page.locator("select[name=groups] option, input[name=groups]")
    labels = {offered.nth(i).evaluate("e => e.textContent || e.value").strip()
              for i in range(offered.count())}
    assert "admin" not in {label.lower() for label in labels}
    at_widths(page, shots, "user-form", height=HEIGHT, widths=WIDTHS)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})

    page.goto(f"{live_server.url}/admin/hisadmin/apitoken/{token.pk}/change/")
    expect(page.locator("select[name=user]")).to_have_count(0)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        assert "office-admin" in page.locator("#content").inner_text()
        page.screenshot(path=str(shots / f"token-page-{width}.png"), full_page=True)
    page.context.close()
