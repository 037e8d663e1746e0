"""Allergies in a real browser: the banner says "not yet asked", a clinician records a coded
severe allergy, the banner shows it, then removes it through the confirmation with a reason.
Screenshots at 1024 and 1440 px, as a clinician and a nurse, go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
J = "application/json"


def shoot(page, name: str, shots: Path) -> None:
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"allergy-{name}-{width}.png"), full_page=False)
        banner = page.locator("#patient-banner").bounding_box()
        heading = page.locator("#content h1").bounding_box()
        assert banner and heading and banner["y"] >= heading["y"] + heading["height"], name
        assert banner["x"] + banner["width"] <= width, name  # no sideways scroll


def test_it_records_shows_and_removes_an_allergy(live_server, browser, make_user,  # noqa: F811
                                                 api_client, reference_data,
                                                 shots: Path) -> None:
    make_user("doctor", "clinician")
    make_user("ward", "nurse")
    clerk = api_client("clerk")
    pid = clerk.post("/api/v1/patients", {"given_name": "Greta", "family_name": "Holmqvist",
                                          "birth_date": "1948-11-30", "sex": "female"},
                     content_type=J).json()["id"]
    clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "CARD", "ward_id": "CARD-A", "bed": "A03", "reason": "Chest pain"},
        content_type=J)
    base = live_server.url
    chart = f"{base}/admin/patients/{pid}/"
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()

    login(page, base, "doctor")
    page.goto(chart)
    banner = page.inner_text("#patient-banner")
    assert "HOLMQVIST, Greta" in banner and "Cardiology Ward A" in banner and "A03" in banner
    assert "Allergies not yet asked" in banner
    shoot(page, "chart-unknown-clinician", shots)
    page.click("#nka-link")  # a confirmation page, then recorded with who and when
    page.click("#confirm-submit")
    page.wait_for_selector("text=No known allergies recorded.")
    assert "No known allergies" in page.inner_text("#patient-banner")
    assert "recorded by doctor on" in page.inner_text("#allergies")
    page.click("#allergy-link")
    assert page.input_value("#id_allergen_code") == ""  # nothing chosen for the clinician
    page.select_option("#id_allergen_code", "PENICILLINS")
    page.fill("#id_reaction", "Anaphylaxis")
    page.select_option("#id_severity", "severe")
    page.select_option("#id_criticality", "high")
    shoot(page, "form-clinician", shots)
    page.click("input[type=submit]")
    page.wait_for_selector("text=Allergy recorded.")
    badge = page.locator("#patient-banner .pb-severe")
    assert "Penicillins" in badge.inner_text()
    assert badge.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(186, 33, 33)"
    page.click("#allergy-link")
    page.fill("#id_substance", "Elastoplast")
    page.select_option("#id_severity", "mild")
    page.click("input[type=submit]")
    page.wait_for_selector("text=Allergy recorded.")
    shoot(page, "chart-clinician", shots)

    ctx.clear_cookies()
    login(page, base, "ward")
    page.goto(chart)
    expect(page.locator(".allergy-remove-link")).to_have_count(0)  # removal is the clinician's
    shoot(page, "chart-nurse", shots)
    page.click("#allergy-link")
    shoot(page, "form-nurse", shots)

    ctx.clear_cookies()
    login(page, base, "doctor")
    page.goto(chart)
    page.locator("#allergies tr", has_text="Penicillins").locator(".allergy-remove-link").click()
    page.wait_for_selector("#allergy-to-remove")
    assert "Anaphylaxis" in page.inner_text("#allergy-to-remove")
    page.click("#confirm-submit")  # no reason yet: refused on the page
    page.wait_for_selector(".errornote")
    page.check("input[name=reason][value=other]")
    page.fill("#id_detail", "Tolerated amoxicillin in 2024")
    shoot(page, "remove-clinician", shots)
    page.click("#confirm-submit")
    page.wait_for_selector("text=Allergy to Penicillins removed.")
    assert "Penicillins" not in page.inner_text("#patient-banner")
    assert "Elastoplast" in page.inner_text("#patient-banner")
    page.click("#removed-allergies summary")
    history = page.inner_text("#removed-allergies")
    assert "Penicillins" in history and "Other: Tolerated amoxicillin in 2024" in history
    assert "Allergy to Penicillins removed: other" in page.inner_text("#audit")
