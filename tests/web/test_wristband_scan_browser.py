"""Wristbands and the bedside scan in a real browser, as a nurse: a scan typed into Find
patients the way a keyboard-wedge scanner types it (the MRN, then Enter) opens the chart;
the wristband and a lab order's labels print with no navigation; on the MAR's Record form a
wrong band is flagged at once and refused on Record, the right one recorded as identity
confirmed by scan. The flow runs once at 1280 px; each page is looked at again, with its
screenshot, at 1280 and 1920 px, the print views with print media."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.test_browser_flow import browser, login  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
J = "application/json"
WIDTHS = (1280, 1920)


@pytest.fixture
def ward(api_client, reference_data) -> dict[str, str]:
    clerk, doc, nurse = api_client("clerk"), api_client("clinician"), api_client("nurse")
    pid = clerk.post("/api/v1/patients", {"given_name": "Rosa", "family_name": "Barcode",
                                          "birth_date": "1947-11-02", "mrn": "BR0077"},
                     content_type=J).json()["id"]
    clerk.post("/api/v1/patients", {"given_name": "Tom", "family_name": "Neighbour",
                                    "birth_date": "1950-01-01", "mrn": "BR0078"},
               content_type=J)
    clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M103", "reason": "Pneumonia"},
        content_type=J)
    doc.post(f"/api/v1/patients/{pid}/allergies", {"substance": "Latex", "severity": "severe"},
             content_type=J)
    para = doc.post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
        "route": "PO", "frequency": "Q6H", "as_needed": True}, content_type=J).json()
    nurse.post(f"/api/v1/patients/{pid}/orders/{para['order_id']}/ready", {}, content_type=J)
    lab = doc.post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "CBC",
                                                      "urgency": "stat"}, content_type=J)
    return {"pid": pid, "para": para["order_id"], "lab": lab.json()["order_id"]}


def at_each_width(page, shots, name: str, *, full_page: bool = False) -> None:
    """A screenshot ``<name>-<width>.png`` at each width, then back to the flow's width."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=full_page)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def test_a_nurse_scans_prints_and_records_by_scan(live_server, browser, make_user,  # noqa: F811
                                                   ward, shots) -> None:
    make_user("rn-band", "nurse")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = ctx.new_page()
    login(page, base, "rn-band")

    page.goto(f"{base}/admin/patients/find/")
    assert page.evaluate("document.activeElement.name") == "scan"  # ready for the scanner
    at_each_width(page, shots, "scan-find")
    page.keyboard.type("BR0077\n")
    page.wait_for_url(f"**/admin/patients/{ward['pid']}/")
    assert page.locator("#banner-mrn").inner_text() == "BR0077"

    page.click("#wristband-link")
    page.wait_for_selector("#wristband")
    assert page.locator("#band-mrn").inner_text() == "BR0077"
    assert "Latex" in page.locator("#band-allergy").inner_text()
    # The print stylesheet may still be loading when the band shows (run AG, four workers):
    # wait for the page's load, then let the check retry until the print rules apply.
    page.wait_for_load_state("load")
    page.emulate_media(media="print")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        expect(page.locator("#print-now")).to_be_hidden()  # no tools, no navigation on paper
        page.screenshot(path=str(shots / f"wristband-print-{width}.png"))
    page.emulate_media(media="screen")
    at_each_width(page, shots, "wristband-screen")

    page.goto(f"{base}/admin/patients/{ward['pid']}/orders/{ward['lab']}/")
    page.click(".labels-link")
    page.wait_for_selector(".specimen-label")
    page.emulate_media(media="print")
    at_each_width(page, shots, "labels-print")
    page.emulate_media(media="screen")

    page.goto(f"{base}/admin/patients/{ward['pid']}/mar/{ward['para']}/record/")
    page.click("#id_scanned_id")
    page.keyboard.type("BR0078\n")  # the neighbour's band
    said = page.locator(".scan-result")
    expect(said).to_contain_text("Wrong patient")
    expect(said).to_have_attribute("data-match", "no")
    assert "/record/" in page.url  # Enter did not record anything
    page.click("input[type=submit]")  # recorded anyway: the server refuses it on the field
    page.wait_for_selector(".errorlist")
    assert "is not this patient's (MRN BR0077)" in page.locator(".errornote, .errorlist"
                                                                 ).all_inner_texts()[-1]
    at_each_width(page, shots, "scan-wrong-patient", full_page=True)

    page.click("#id_scanned_id")
    page.keyboard.type("br0077\n")
    expect(said).to_have_attribute("data-match", "yes")
    assert page.evaluate("document.activeElement.type") == "submit"  # on to Record
    at_each_width(page, shots, "scan-match", full_page=True)
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Identity confirmed by scan.")
    assert page.locator(".mar-scanned").first.inner_text() == "✓ identity confirmed by scan"
    at_each_width(page, shots, "mar-scanned", full_page=True)
    ctx.close()
