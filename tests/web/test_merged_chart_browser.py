"""The chart of a record merged into another, in a real browser as records staff (a clerk):
it says where the record went, its link opens the surviving record, and no action is
offered. Screenshots at 1024 and 1440 px go to ``$SCREENSHOT_DIR`` (default: the test's
temporary directory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.web.browser_shots import at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
J = "application/json"


def test_the_retired_chart_leads_to_the_survivor(live_server, browser, make_user,  # noqa: F811
                                                 api_client, reference_data,
                                                 shots: Path) -> None:
    make_user("records", "clerk")
    clerk = api_client("clerk")
    survivor = clerk.post("/api/v1/patients", {
        "given_name": "Zoë", "family_name": "Ibáñez", "birth_date": "1961-02-03",
        "sex": "female"}, content_type=J).json()
    retired = clerk.post("/api/v1/patients", {
        "given_name": "Female", "family_name": "Unknown", "birth_date": "1961-02-03",
        "sex": "female"}, content_type=J).json()
    clerk.post(f"/api/v1/patients/{retired['id']}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M104", "reason": "Found collapsed"},
        content_type=J)
    merged = clerk.post(f"/api/v1/patients/{survivor['id']}/merge", {
        "retired_id": retired["id"],
        "retired_etag": clerk.get(f"/api/v1/patients/{retired['id']}")["ETag"],
        "reason": "Unconscious arrival registered as Unknown"}, content_type=J,
        HTTP_IF_MATCH=survivor["etag"])
    assert merged.status_code == 200, merged.content
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1024, "height": 900})
    page = ctx.new_page()
    login(page, base, "records")
    page.goto(f"{base}/admin/patients/{retired['id']}/")
    notice = page.locator("#merged-into")
    expect(notice).to_be_visible()
    assert f"Merged into {survivor['mrn']}" in " ".join(notice.inner_text().split())
    expect(page.locator(".object-tools a")).to_have_count(0)  # nothing to do here
    at_widths(page, shots, "merged-chart-clerk")
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        box = notice.bounding_box()
        assert box and box["x"] + box["width"] <= width  # no sideways scroll
    page.click("#merged-into-link")
    page.wait_for_url(f"{base}/admin/patients/{survivor['id']}/")
    assert "M104" in page.inner_text("#patient-banner")  # the stay moved with the record
    at_widths(page, shots, "merged-survivor-clerk")
    ctx.close()
