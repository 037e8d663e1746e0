"""Wristbands and specimen labels: what they print, that they load nothing from another
host, that only the roles the policy names see and open them, and bad input a 400/404."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def world(api_client, make_user, reference_data) -> dict:
    clerk, doc = api_client("clerk"), api_client("clinician")
    pid = clerk.post("/api/v1/patients", {"given_name": "Iris", "family_name": "Band",
                                          "birth_date": "1950-03-07", "mrn": "WB0042"},
                     content_type=J).json()["id"]
    clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M101", "reason": "Fall"},
        content_type=J)
    doc.post(f"/api/v1/patients/{pid}/allergies", {"substance": "Penicillin",
             "severity": "severe"}, content_type=J)
    lab = doc.post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "CBC"},
                   content_type=J).json()["order_id"]
    clients = {}
    for role in ("clerk", "clinician", "nurse", "admin"):
        clients[role] = Client()
        clients[role].force_login(make_user(f"wb-{role}", role))
    return {"pid": pid, "lab": lab, **clients, "base": f"/admin/patients/{pid}/"}


def _external(html: str) -> list[str]:
    """Every src/href that names another host (or a protocol-relative one)."""
    return [u for u in re.findall(r'(?:src|href)="([^"]+)"', html)
            if u.startswith(("http:", "https:", "//"))]


def test_it_prints_a_wristband_with_name_mrn_birth_date_allergies_and_barcode(world) -> None:
    page = world["nurse"].get(world["base"] + "wristband/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "BAND, Iris" in html and 'id="band-mrn">WB0042<' in html
    assert "7 Mar 1950" in html and "1950-03-07" not in html  # the birth date in words
    assert "ALLERGIES:" in html and "Penicillin" in html
    assert '<svg' in html and 'data-code="WB0042"' in html and 'aria-label="Barcode of MRN' in html
    assert "@page" not in html and "patients/wristband-print.css" in html  # print CSS, served
    assert _external(html) == [] and "<script>" not in html  # CSP: no inline script
    assert 'id="nav-sidebar"' not in html and "breadcrumbs" not in html  # no navigation


def test_the_wristband_css_is_sized_for_a_band_printer(world) -> None:
    css = world["nurse"].get("/static/patients/wristband-print.css")
    text = b"".join(css.streaming_content).decode() if css.streaming else css.content.decode()
    assert "@page { size: 200mm 25mm; margin: 0; }" in text


def test_the_chart_links_the_wristband_only_for_roles_that_may_print_it(world) -> None:
    for role, shown in (("clerk", True), ("nurse", True), ("clinician", False)):
        chart = world[role].get(world["base"]).content.decode()
        assert ('id="wristband-link"' in chart) is shown, role
        assert (world[role].get(world["base"] + "wristband/").status_code == 403) is not shown


def test_it_prints_specimen_labels_for_a_lab_order(world) -> None:
    url = world["base"] + f"orders/{world['lab']}/labels/"
    page = world["nurse"].get(url + "?copies=3")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('class="specimen-label"') == 3
    assert "BAND, Iris" in html and "WB0042" in html and "Full blood count" in html
    number = world["lab"].replace("-", "")[:8].upper()
    assert f"Order {number}" in html and f'aria-label="Barcode of order {number}"' in html
    assert "Collected:" in html and "initials" in html  # the collection time is a blank
    assert _external(html) == [] and "<script>" not in html
    assert 'id="nav-sidebar"' not in html


def test_the_order_page_links_labels_only_for_roles_that_may_print_them(world) -> None:
    order = world["base"] + f"orders/{world['lab']}/"
    for role, shown in (("clinician", True), ("nurse", True), ("clerk", False)):
        html = world[role].get(order).content.decode()
        assert ('class="button labels-link"' in html) is shown, role
        status = world[role].get(order + "labels/").status_code
        assert (status == 403) is not shown, (role, status)


def test_bad_label_requests_are_400_or_404_never_500(world) -> None:
    base = world["base"]
    nurse = world["nurse"]
    for copies in ("0", "11", "x", "-1"):
        r = nurse.get(base + f"orders/{world['lab']}/labels/?copies={copies}")
        assert r.status_code == 400, copies
    assert nurse.get(base + "orders/no-such/labels/").status_code == 404
    assert nurse.get("/admin/patients/nobody/wristband/").status_code == 404
    assert world["admin"].get(base + "wristband/").status_code == 403
