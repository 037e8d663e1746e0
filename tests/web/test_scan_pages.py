"""A wristband scanned (a keyboard-wedge scanner types the MRN and Enter): on Find patients
it opens the chart; on the MAR's Record, the chart's Administer and the API a band that is
not the patient's refuses the dose (nothing recorded), the patient's own is kept as
"identity confirmed by scan" and shown on the MAR and the order page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def world(api_client, make_user, reference_data) -> dict:
    clerk, doc, nurse_api = (api_client("clerk"), api_client("clinician"),
                             api_client("nurse"))
    pid = clerk.post("/api/v1/patients", {"given_name": "Sam", "family_name": "Scan",
                                          "birth_date": "1961-06-01", "mrn": "SC0001"},
                     content_type=J).json()["id"]
    clerk.post("/api/v1/patients", {"given_name": "Other", "family_name": "Person",
                                    "birth_date": "1970-01-01", "mrn": "SC0002"},
               content_type=J)
    clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Sepsis"}, content_type=J)
    doc.post(f"/api/v1/patients/{pid}/allergies/none", content_type=J)
    now = datetime.now(UTC)
    start = datetime(now.year, now.month, now.day, tzinfo=UTC)
    orders = {}
    for name, body in {
        "amox": {"medication_code": "AMOX", "dose": "1", "unit": "g", "route": "PO",
                 "frequency": "Q8H", "start_at": start.isoformat()},
        "para": {"medication_code": "PARA", "dose": "1000", "unit": "mg", "route": "PO",
                 "frequency": "Q6H", "as_needed": True},
    }.items():
        oid = doc.post(f"/api/v1/patients/{pid}/orders", {"kind": "medication", **body},
                       content_type=J).json()["order_id"]
        nurse_api.post(f"/api/v1/patients/{pid}/orders/{oid}/ready", {}, content_type=J)
        orders[name] = oid
    nurse = Client()
    nurse.force_login(make_user("rn-scan", "nurse"))
    return {"pid": pid, "nurse": nurse, "api": nurse_api, "start": start, **orders,
            "base": f"/admin/patients/{pid}/", "order_api": f"/api/v1/patients/{pid}/orders/"}


def _given(world: dict, order: str) -> list[dict]:
    return world["api"].get(world["order_api"] + world[order]).json()["administrations"]


def test_a_scan_on_find_patients_opens_the_chart(world: dict) -> None:
    nurse = world["nurse"]
    page = nurse.get("/admin/patients/find/").content.decode()
    assert 'name="scan"' in page and "autofocus" in page and "Scan a wristband" in page
    # what scanners add: lower case, spaces, a control character (GS)
    for typed in ("SC0001", "sc0001", " SC0001 ", "\x1dSC0001"):
        r = nurse.get("/admin/patients/find/", {"scan": typed})
        assert r.status_code == 302 and r["Location"] == world["base"], typed


def test_a_scan_that_names_nobody_is_an_error_on_the_scan_field(world: dict) -> None:
    for typed in ("SC9999", "../../x", "é" * 70, ""):
        r = world["nurse"].get("/admin/patients/find/", {"scan": typed})
        assert r.status_code == 200, typed
        assert r.context["scan_form"].errors.get("scan"), typed
        assert not r.context["form"].is_bound  # the name search is left alone
    html = world["nurse"].get("/admin/patients/find/", {"scan": "SC9999"}).content.decode()
    assert "No patient has the MRN scanned (SC9999)" in html


def _record_url(world: dict) -> str:
    # the as-needed order: a dose answers no dose time, whatever the hospital's clock says
    return world["base"] + f"mar/{world['para']}/record/"


def test_the_mar_record_refuses_another_patients_band(world: dict) -> None:
    url = _record_url(world)
    form = world["nurse"].get(url)
    html = form.content.decode()
    assert 'name="scanned_id"' in html and 'data-scan-expect="SC0001"' in html
    assert "patients/scan.js" in html
    r = world["nurse"].post(url, {**form.context["form"].initial, "administered_at": "",
                                  "scanned_id": "SC0002"})
    assert r.status_code == 200
    errors = r.context["form"].errors["scanned_id"]
    assert "(SC0002) is not this patient's (MRN SC0001)" in errors[0]
    assert r.context["form"].data["scanned_id"] == ""  # the next scan starts clean
    assert _given(world, "para") == []


def test_the_mar_record_keeps_a_matching_scan_and_shows_it(world: dict) -> None:
    url = _record_url(world)
    initial = world["nurse"].get(url).context["form"].initial
    done = world["nurse"].post(url, {**initial, "administered_at": "", "scanned_id": "sc0001"},
                               follow=True)
    html = done.content.decode()
    assert "Identity confirmed by scan." in html  # the message
    assert '<span class="mar-scanned">✓ identity confirmed by scan</span>' in html  # MAR row
    [entry] = _given(world, "para")
    assert entry["identity_confirmed_by"] == "scan"
    order_page = world["nurse"].get(world["base"] + f"orders/{world['para']}/").content.decode()
    assert "✓ Identity confirmed by scan" in order_page
    events = world["api"].get(f"/api/v1/patients/{world['pid']}/events").json()
    items = events.get("items", events) if isinstance(events, dict) else events
    given = [e for e in items if e["type"] == "MedicationAdministered"]
    assert given and given[0]["data"]["identity_confirmed_by"] == "scan"  # the event too


def test_the_charts_administer_refuses_a_wrong_scan_and_keeps_a_match(world: dict) -> None:
    url = world["base"] + f"orders/{world['para']}/administer/"
    form = world["nurse"].get(url)
    html = form.content.decode()
    assert 'name="scanned_id"' in html and "patients/scan.js" in html
    data = {**form.context["form"].initial, "dose": "1000", "unit": "mg"}
    wrong = world["nurse"].post(url, {**data, "scanned_id": "SC0002"})
    assert wrong.status_code == 200 and wrong.context["form"].errors["scanned_id"]
    assert _given(world, "para") == []
    done = world["nurse"].post(url, {**data, "scanned_id": "SC0001"}, follow=True)
    assert "Identity confirmed by scan." in done.content.decode()
    assert _given(world, "para")[0]["identity_confirmed_by"] == "scan"


def test_the_api_refuses_a_wrong_scan_with_409_wrong_patient(world: dict) -> None:
    url = world["order_api"] + world["para"] + "/administrations"
    body = {"dose": "1000", "unit": "mg"}
    wrong = world["api"].post(url, {**body, "scanned_id": "SC0002"}, content_type=J)
    assert wrong.status_code == 409, wrong.content
    problem = wrong.json()
    assert problem["type"].endswith("/api/v1/problems/wrong-patient")
    assert [c["type"] for c in problem["conflicts"]] == ["wrong-patient"]
    assert "SC0002" in problem["conflicts"][0]["detail"]
    assert _given(world, "para") == []
    right = world["api"].post(url, {**body, "scanned_id": "SC0001"}, content_type=J)
    assert right.status_code == 201, right.content
    assert right.json()["administrations"][-1]["identity_confirmed_by"] == "scan"


def test_a_dose_recorded_without_a_scan_says_so(world: dict) -> None:
    url = world["order_api"] + world["para"] + "/administrations"
    r = world["api"].post(url, {"dose": "1000", "unit": "mg"}, content_type=J)
    assert r.status_code == 201 and r.json()["administrations"][-1][
        "identity_confirmed_by"] is None
