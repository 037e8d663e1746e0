"""The interactive API docs show what an edit can answer: the required If-Match, the 428
and the other problem answers as application/problem+json, and the consistency token header.
The page is opened once at 1024 px; screenshots at 1024 and 1440 px go to ``$SCREENSHOT_DIR``
(default: the test's tmp dir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_docs_show_an_edits_if_match_and_its_problem_answers(
    live_server: Any,
    browser: Any,  # noqa: F811
    make_user: Any,
    shots: Path,
) -> None:
    make_user("clerk", "clerk")
    ctx = browser.new_context(viewport={"width": 1024, "height": 900})
    page = ctx.new_page()
    login(page, live_server.url, "clerk")
    page.goto(f"{live_server.url}/api/v1/docs")
    edit = page.locator(".opblock-put", has_text="/api/v1/patients/{patient_id}").first
    edit.wait_for(timeout=20_000)
    edit.locator(".opblock-summary").click()
    edit.locator(".responses-table").first.wait_for()
    text = edit.inner_text()
    assert "If-Match" in text and "required" in text
    for status in ("200", "400", "401", "403", "404", "409", "412", "422", "428", "503"):
        assert status in text, status
    assert "precondition-required" in text
    assert "application/problem+json" in text
    assert "X-Consistency-Token" in text
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.evaluate("window.scrollTo(0, 0)")  # from the top at each width, as on opening
        edit.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"api-docs-put-patient-{width}.png"), full_page=False)
        edit.locator(".responses-table").first.screenshot(
            path=str(shots / f"api-docs-put-patient-answers-{width}.png")
        )
    ctx.close()
