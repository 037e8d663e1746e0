"""Prescribing for a patient whose allergies were never asked, in a real browser: the form
says so once, before the first submit, with links to record them; a submit anyway shows the
warning once more only as the check to answer (not "Allergies not yet asked — Allergies not
yet asked:"). The flow runs once at 1024 px; each page is looked at (and screenshotted) at
1024 and 1440 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.browser_shots import WIDTHS, signed_in
from tests.web.test_browser_flow import browser, fill_prescription  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
UNASKED = "Allergies not yet asked"
HEIGHT = 900


def test_the_form_says_allergies_are_unasked_once_with_a_link(live_server, browser, make_user,  # noqa: F811
                                                              admit, shots) -> None:
    pid = admit("Unasked", bed="M106", allergies_asked=False)
    make_user("doctor", "clinician")
    base = live_server.url
    ctx, page = signed_in(browser, base, "doctor", width=WIDTHS[0], height=HEIGHT)
    page.goto(f"{base}/admin/patients/{pid}/orders/new/medication/")

    form = page.locator("#content-main form")
    notice = page.locator("#allergies-unasked")
    expect(notice.locator("a", has_text="record no known allergies")).to_have_count(1)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        assert form.inner_text().count(UNASKED) == 1
        expect(notice).to_be_visible()
        page.screenshot(path=str(shots / f"prescribe-unasked-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})

    fill_prescription(page, "PARA", "1000", "PO", "Q6H")
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector("#order-warnings")
    expect(page.locator("#allergies-unasked")).to_have_count(0)  # now the check to answer
    expect(page.locator("#record-allergies-first a")).to_have_count(2)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        text = form.inner_text()  # said once, then named once more by its reason box's label
        assert text.count(f"{UNASKED} —") == 1 and f"{UNASKED}:" not in text
        assert text.count(UNASKED) == 2 and f"Reason to override ({UNASKED})" in text
        detail = page.inner_text("#order-warnings [data-check=allergy-status-unknown] "
                                 ".order-warning-detail")
        assert detail.startswith(f"⚠ {UNASKED} — No allergy")
        page.screenshot(path=str(shots / f"prescribe-unasked-refused-{width}.png"),
                        full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})

    page.click("#record-allergies-first a:has-text('record no known allergies')")
    page.wait_for_url(f"**/patients/{pid}/allergies/**")
    ctx.close()
