"""Order checks through the API: the 409 problem with its type and conflicts, overrides in
and out, and the 409 documented in the OpenAPI schema."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
AMOX = {"kind": "medication", "medication_code": "AMOX", "dose": "500", "unit": "mg",
        "route": "PO", "frequency": "Q8H"}



@pytest.fixture
def allergic(team: dict[str, Client]) -> str:
    pid = team["clerk"].post("/api/v1/patients", {"given_name": "Pen", "family_name": "Allergic",
                                                  "birth_date": "1950-01-01"},
                             content_type=J).json()["id"]
    assert team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Pneumonia"},
        content_type=J).status_code == 201
    assert team["doc"].post(f"/api/v1/patients/{pid}/allergies", {
        "substance": "Penicillin", "reaction": "anaphylaxis", "severity": "severe"},
        content_type=J).status_code == 200
    return pid


def orders(team: dict[str, Client], pid: str) -> list[dict]:
    return team["doc"].get(f"/api/v1/patients/{pid}/orders").json()


def test_a_conflict_is_a_409_problem_with_its_type_and_conflicts(team, allergic) -> None:
    r = team["doc"].post(f"/api/v1/patients/{allergic}/orders", {**AMOX, "dose": "2000"},
                         content_type=J)
    assert r.status_code == 409, r.content
    assert r["Content-Type"] == "application/problem+json"
    body = r.json()
    assert body["type"] == "/api/v1/problems/allergy-conflict"
    assert body["type"].endswith("allergy-conflict")
    assert body["status"] == 409 and body["title"] and body["detail"]
    assert [c["type"] for c in body["conflicts"]] == ["allergy-conflict", "dose-limit"]
    assert all(set(c) == {"type", "detail"} for c in body["conflicts"])
    assert "anaphylaxis" in body["conflicts"][0]["detail"]
    assert "1000 mg" in body["conflicts"][1]["detail"]
    assert orders(team, allergic) == []


def test_overrides_round_trip(team, allergic) -> None:
    url = f"/api/v1/patients/{allergic}/orders"
    placed = team["doc"].post(url, {**AMOX, "overrides": {
        "allergy-conflict": "Tolerated amoxicillin last year"}}, content_type=J)
    assert placed.status_code == 201, placed.content
    [override] = placed.json()["overrides"]
    assert override["check"] == "allergy-conflict"
    assert override["reason"] == "Tolerated amoxicillin last year"
    assert override["by"] == "api-clinician" and override["at"] and override["detail"]
    got = team["doc"].get(f"{url}/{placed.json()['order_id']}").json()
    assert got["overrides"] == [override]
    events = team["doc"].get(f"/api/v1/patients/{allergic}/events").json()["items"]
    assert events[0]["data"]["overrides"] == [override]

    again = team["doc"].post(url, {**AMOX, "overrides": {
        "allergy-conflict": "Tolerated amoxicillin last year"}}, content_type=J)
    assert again.status_code == 409  # the duplicate has no reason yet
    assert again.json()["type"].endswith("duplicate-order")
    assert [c["type"] for c in again.json()["conflicts"]] == [
        "allergy-conflict", "duplicate-order"]
    both = team["doc"].post(url, {**AMOX, "overrides": {
        "allergy-conflict": "Tolerated amoxicillin last year",
        "duplicate-order": "IV and PO overlap for a day"}}, content_type=J)
    assert both.status_code == 201
    assert [o["check"] for o in both.json()["overrides"]] == ["allergy-conflict",
                                                              "duplicate-order"]


def test_a_lab_duplicate_and_unknown_override_keys(team, allergic) -> None:
    url = f"/api/v1/patients/{allergic}/orders"
    lab = {"kind": "lab", "test_code": "TROP", "urgency": "stat"}
    first = team["doc"].post(url, lab, content_type=J)
    assert first.status_code == 201 and first.json()["overrides"] == []
    dup = team["doc"].post(url, lab, content_type=J).json()
    assert dup["type"] == "/api/v1/problems/duplicate-order"
    assert "Troponin" in dup["conflicts"][0]["detail"]
    bad = team["doc"].post(url, {**lab, "overrides": {"duplicate": "x"}}, content_type=J)
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "overrides"
    snake = team["doc"].post(url, {**lab, "overrides": {"duplicate_order": "serial troponin"}},
                             content_type=J)
    assert snake.status_code == 201
    assert snake.json()["overrides"][0]["check"] == "duplicate-order"


def test_a_unit_of_another_dimension_is_a_422(team, allergic) -> None:
    r = team["doc"].post(f"/api/v1/patients/{allergic}/orders", {
        **AMOX, "medication_code": "PARA", "unit": "ml"}, content_type=J)
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "unit"


def test_a_route_the_medication_is_not_given_by_is_a_422(team, allergic) -> None:
    r = team["doc"].post(f"/api/v1/patients/{allergic}/orders", {
        "kind": "medication", "medication_code": "IBU", "dose": "400", "unit": "mg",
        "route": "IV", "frequency": "Q8H"}, content_type=J)
    assert r.status_code == 422, r.content
    assert "Ibuprofen is not given by the intravenous route; choose oral." in r.content.decode()
    assert orders(team, allergic) == []


def test_the_409_is_documented_with_its_conflicts(team) -> None:
    schema = team["doc"].get("/api/v1/openapi.json").json()
    post = schema["paths"]["/api/v1/patients/{patient_id}/orders"]["post"]
    ref = post["responses"]["409"]["content"]["application/problem+json"]["schema"]["$ref"]
    problem = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert "conflicts" in problem["properties"] and "type" in problem["properties"]
    order_in = schema["components"]["schemas"]["OrderIn"]
    assert "overrides" in order_in["properties"]


def test_a_reason_x_is_refused_and_the_409_says_why(team, allergic) -> None:
    r = team["doc"].post(f"/api/v1/patients/{allergic}/orders", {
        **AMOX, "overrides": {"allergy-conflict": "x"}}, content_type=J)
    assert r.status_code == 409, r.content
    [conflict] = r.json()["conflicts"]
    assert "10 characters" in conflict["reason_refused"]
    assert orders(team, allergic) == []


def test_a_dose_above_the_hard_limit_is_a_422_that_no_override_passes(team, allergic) -> None:
    r = team["doc"].post(f"/api/v1/patients/{allergic}/orders", {
        **AMOX, "medication_code": "IBU", "dose": "10", "unit": "g", "frequency": "Q4H",
        "overrides": {"allergy-conflict": "Not relevant to this drug",
                      "dose-limit": "Severe pain after the operation"}}, content_type=J)
    assert r.status_code == 422, r.content
    body = r.json()
    assert body["type"] == "/api/v1/problems/dose-hard-limit"
    assert "cannot be overridden" in body["detail"]
    assert orders(team, allergic) == []


def test_allergies_never_asked_is_a_409_overridable_with_a_reason(team) -> None:
    pid = team["clerk"].post("/api/v1/patients", {"given_name": "Una", "family_name": "Unasked",
                                                  "birth_date": "1950-01-01"},
                             content_type=J).json()["id"]
    assert team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Collapse"},
        content_type=J).status_code == 201
    url = f"/api/v1/patients/{pid}/orders"
    r = team["doc"].post(url, AMOX, content_type=J)
    assert r.status_code == 409, r.content
    assert r.json()["type"] == "/api/v1/problems/allergy-status-unknown"
    assert [c["type"] for c in r.json()["conflicts"]] == ["allergy-status-unknown"]
    placed = team["doc"].post(url, {**AMOX, "overrides": {
        "allergy-status-unknown": "Unconscious, no relatives reachable"}}, content_type=J)
    assert placed.status_code == 201, placed.content
    assert placed.json()["overrides"][0]["check"] == "allergy-status-unknown"
