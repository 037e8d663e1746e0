"""A held stream in a real browser: the patient's row on the worklist carries the red notice,
readable at 1024 and 1440 px (the worklist opened once, at 1024 px, and looked at at each
width). Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.service.test_held_streams import place_raw_medication, poisoned, through_tasks  # noqa: F401
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1024, 1440)  # the worklist is opened at the first, the narrowest


def test_the_held_patients_row_says_it_is_not_current(live_server, browser, poisoned,  # noqa: F811
                                                      make_user, tmp_path) -> None:
    make_user("ward-held", "nurse")
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 800}).new_page()
    login(page, live_server.url, "ward-held")
    page.goto(f"{live_server.url}/admin/worklists/admitted/?department=MED")
    notice = page.locator("tr.held-notice")
    assert notice.count() == 1
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        assert "Not current since" in notice.inner_text()
        box = notice.bounding_box()
        assert box is not None and box["width"] <= width  # within the page, no sideways scroll
        color = notice.locator(".held-text").evaluate("e => getComputedStyle(e).color")
        assert color == "rgb(186, 33, 33)"  # the stylesheet's red, not the default text colour
        page.screenshot(path=str(shots / f"held-notice-{width}.png"), full_page=True)
    page.context.close()
