"""Results through the API: completing with results, reading them, acknowledging, roles."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
CBC = [{"analyte_code": "HGB", "value": 120}, {"analyte_code": "WBC", "value": "7.5"},
       {"analyte_code": "PLT", "value": 450}]



@pytest.fixture
def admitted(admit: Callable[..., str]) -> str:
    return admit("Sult", given="Rae", birth_date="1955-02-02", reason="Anaemia")


def started(team: dict[str, Client], pid: str, body: dict) -> str:
    order = team["doc"].post(f"/api/v1/patients/{pid}/orders", body, content_type=J).json()
    base = f"/api/v1/patients/{pid}/orders/{order['order_id']}"
    assert team["nurse"].post(f"{base}/start", {}, content_type=J).status_code == 200
    return base


def test_a_lab_order_completes_with_results_and_lists_them(team, admitted) -> None:
    base = started(team, admitted, {"kind": "lab", "test_code": "CBC"})
    done = team["nurse"].post(f"{base}/complete", {"results": CBC}, content_type=J)
    assert done.status_code == 200, done.content
    assert done.json()["status"] == "completed"
    assert [v["flag"] for v in done.json()["results"]["values"]] == ["L", None, "H"]
    listed = team["clerk"].get(f"/api/v1/patients/{admitted}/results")
    assert listed.status_code == 200
    [result] = listed.json()
    assert result["order_id"] == base.rsplit("/", 1)[1] and result["kind"] == "lab"
    assert result["test_code"] == "CBC" and result["abnormal"] is True
    assert result["high"] == ["PLT"] and result["low"] == ["HGB"]
    assert result["values"][0] == {"analyte": "HGB", "name": "Haemoglobin", "value": 120,
                                   "unit": "g_l", "low": 130, "high": 175, "flag": "L",
                                   "text": "120", "comparator": None, "lab_range": None,
                                   "lab_flags": None, "observed_at": None, "comments": None}
    assert result["status"] == "final" and result["history"] == []
    assert result["resulted_by"] == "api-nurse" and result["acknowledged_at"] is None
    assert set(result) >= {"placed_by", "placed_at", "resulted_at", "report", "etag"}


def test_results_are_listed_newest_first_with_imaging_reports(team, admitted) -> None:
    lab = started(team, admitted, {"kind": "lab", "test_code": "CBC"})
    xray = started(team, admitted, {"kind": "imaging", "modality": "CR", "body_part": "CHEST"})
    assert team["nurse"].post(f"{lab}/complete", {"results": CBC},
                              content_type=J).status_code == 200
    assert team["nurse"].post(f"{xray}/complete", {"report": "Clear lungs."},
                              content_type=J).status_code == 200
    listed = team["doc"].get(f"/api/v1/patients/{admitted}/results").json()
    assert [r["kind"] for r in listed] == ["imaging", "lab"]
    assert listed[0]["report"] == "Clear lungs." and listed[0]["values"] == []


@pytest.mark.parametrize(("body", "field"), [
    ({}, "results.HGB"),
    ({"results": CBC[:2]}, "results.PLT"),
    ({"results": [{**CBC[0], "unit": "mmol_l"}, *CBC[1:]]}, "results.HGB.unit"),
    ({"results": [*CBC, {"analyte_code": "K", "value": 4}]}, "results.K"),
])
def test_a_lab_order_without_valid_results_is_a_422(team, admitted, body, field) -> None:
    base = started(team, admitted, {"kind": "lab", "test_code": "CBC"})
    r = team["nurse"].post(f"{base}/complete", body, content_type=J)
    assert r.status_code == 422, r.content
    assert r.json()["errors"][0]["field"] == field
    assert team["nurse"].get(base).json()["status"] == "in_progress"


def test_a_non_numeric_value_is_a_422(team, admitted) -> None:
    base = started(team, admitted, {"kind": "lab", "test_code": "CBC"})
    r = team["nurse"].post(f"{base}/complete",
                           {"results": [{"analyte_code": "HGB", "value": "high"}, *CBC[1:]]},
                           content_type=J)
    assert r.status_code == 422


def test_an_imaging_order_without_a_report_is_a_422(team, admitted) -> None:
    base = started(team, admitted, {"kind": "imaging", "modality": "CR", "body_part": "CHEST"})
    for body in ({}, {"report": "  "}, {"report": "x" * 10_001}):
        r = team["nurse"].post(f"{base}/complete", body, content_type=J)
        assert r.status_code == 422, r.content
        assert r.json()["errors"][0]["field"] == "report"


def test_acknowledging_results(team, admitted) -> None:
    base = started(team, admitted, {"kind": "lab", "test_code": "CBC"})
    oid = base.rsplit("/", 1)[1]
    ack = f"/api/v1/patients/{admitted}/orders/{oid}/acknowledge"
    assert team["doc"].post(ack, {}, content_type=J).status_code == 409  # nothing to review
    done = team["nurse"].post(f"{base}/complete", {"results": CBC}, content_type=J)
    assert team["nurse"].post(ack, {}, content_type=J).status_code == 403
    assert team["clerk"].post(ack, {}, content_type=J).status_code == 403
    stale = team["doc"].post(ack, {}, content_type=J, HTTP_IF_MATCH='"stale"')
    assert stale.status_code == 412
    r = team["doc"].post(ack, {}, content_type=J, HTTP_IF_MATCH=done.headers["ETag"])
    assert r.status_code == 200, r.content
    assert r.json()["acknowledged_by"] == "api-clinician" and r.json()["acknowledged_at"]
    assert r.headers["ETag"]
    again = team["doc"].post(ack, {}, content_type=J)
    assert again.status_code == 409 and again.json()["type"]
    trail = [e["type"] for e in team["doc"].get(f"/api/v1/patients/{admitted}/events")
             .json()["items"]]
    assert trail[:3] == ["ResultAcknowledged", "ResultsRecorded", "OrderCompleted"]


def test_unknown_patient_and_order_are_404s(team, admitted) -> None:
    assert team["doc"].get("/api/v1/patients/nobody/results").status_code == 404
    r = team["doc"].post(f"/api/v1/patients/{admitted}/orders/nothing/acknowledge", {},
                         content_type=J)
    assert r.status_code == 404


def test_the_endpoints_are_documented(team) -> None:
    spec = team["doc"].get("/api/v1/openapi.json").json()
    paths = spec["paths"]
    listed = paths["/api/v1/patients/{patient_id}/results"]["get"]["responses"]
    ack = paths["/api/v1/patients/{patient_id}/orders/{order_id}/acknowledge"]["post"]
    assert {"200", "404"} <= set(listed)
    assert {"200", "404", "409", "412", "422"} <= set(ack["responses"])
    complete = paths["/api/v1/patients/{patient_id}/orders/{order_id}/{action}"]["post"]
    assert "results" in str(complete["requestBody"]) or "ActionIn" in str(complete)
