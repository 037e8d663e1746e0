"""The API's shared contract: snake_case keys, strict bodies, If-Match on edits (428),
JSON problems for unknown paths and methods, and an OpenAPI document that lists them."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.test import Client

from tests.web.fixed_clock import Clock, fixed_clock, london  # noqa: F401

pytestmark = pytest.mark.django_db
J = "application/json"
PROBLEM = "application/problem+json"
CAMEL = re.compile(r"[a-z][A-Z]")
MED = {
    "kind": "medication",
    "medication_code": "PARA",
    "dose": "1",
    "unit": "g",
    "route": "PO",
    "frequency": "Q8H",
}


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


@pytest.fixture
def charted(team: dict[str, Client], admit: Callable[..., str],
            fixed_clock: Callable[[str, str], Clock]) -> dict[str, str]:  # noqa: F811
    """An admitted patient with an allergy and a given dose of a medication order. On a
    fixed clock, 14:50 in London: the order runs from 05:00, so its 06:00 dose is late (on
    Medications due) and the dose given now closes its 14:00 one."""
    fixed_clock("2026-06-10", "14:50")
    pid = admit("Keys", bed="M104")
    doc, nurse = team["doc"], team["nurse"]
    assert (
        doc.post(
            f"/api/v1/patients/{pid}/allergies",
            {"allergen_code": "PENICILLINS", "severity": "mild"},
            content_type=J,
        ).status_code
        == 200
    )
    order = doc.post(f"/api/v1/patients/{pid}/orders", {
        **MED, "start_at": london("2026-06-10", "05:00").isoformat()}, content_type=J).json()
    base = f"/api/v1/patients/{pid}/orders/{order['order_id']}"
    nurse.post(f"{base}/ready", {}, content_type=J)
    given = nurse.post(f"{base}/administrations", {"dose": "1", "unit": "g"}, content_type=J)
    assert given.status_code == 201, given.content
    return {"pid": pid, "oid": order["order_id"], "etag": given["ETag"]}


def test_it_answers_orders_allergies_and_events_in_snake_case(
    team: dict[str, Client], charted: dict[str, str], drain_worklists: Callable[[], int]
) -> None:
    pid, oid = charted["pid"], charted["oid"]
    drain_worklists()  # the worklists' rows too
    order = team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()
    assert {"order_id", "patient_id", "placed_at", "placed_by", "medication_code"} <= set(order)
    assert {"administration_id", "administered_at", "scheduled_for"} <= set(
        order["administrations"][0]
    )
    for path in (
        f"/api/v1/patients/{pid}",
        f"/api/v1/patients/{pid}/orders",
        f"/api/v1/patients/{pid}/orders/{oid}",
        f"/api/v1/patients/{pid}/events",
        f"/api/v1/patients/{pid}/admissions",
        f"/api/v1/patients/{pid}/mar",
        "/api/v1/worklists/orders?department=MED",
        "/api/v1/worklists/admitted?department=MED",
        "/api/v1/worklists/medications-due?ward=MED-1",
        "/api/v1/worklists/patients?q=Keys",
    ):
        body = team["nurse"].get(path).json()
        assert body if "worklists" not in path else body["items"], path
        assert not {k for k in _keys(body) if CAMEL.search(k)}, (path, body)
    allergy = team["nurse"].get(f"/api/v1/patients/{pid}").json()["allergies"][0]
    assert (allergy["allergen_code"], allergy["recorded_by"]) == ("PENICILLINS", "api-clinician")


def test_it_refuses_a_body_with_an_unknown_or_old_camel_case_key(
    team: dict[str, Client], charted: dict[str, str]
) -> None:
    r = team["doc"].post(
        f"/api/v1/patients/{charted['pid']}/orders",
        {**MED, "medicationCode": "PARA"},
        content_type=J,
    )
    assert r.status_code == 422 and r["Content-Type"] == PROBLEM
    assert "medicationCode" in {e["field"] for e in r.json()["errors"]}


def test_an_edit_without_if_match_is_428_and_changes_nothing(
    team: dict[str, Client], charted: dict[str, str]
) -> None:
    pid, oid = charted["pid"], charted["oid"]
    before = team["clerk"].get(f"/api/v1/patients/{pid}")
    edits = [
        (
            team["clerk"],
            f"/api/v1/patients/{pid}",
            {
                "given_name": "Eve",
                "family_name": "Keys",
                "birth_date": "1955-02-02",
                "sex": "female",
            },
        ),
        (team["nurse"], f"/api/v1/patients/{pid}/orders/{oid}/assignee", {"assignee": None}),
    ]
    for client, url, body in edits:
        r = client.put(url, body, content_type=J)
        assert r.status_code == 428, r.content
        assert r["Content-Type"] == PROBLEM
        assert r.json()["type"].endswith("precondition-required")
    after = team["clerk"].get(f"/api/v1/patients/{pid}")
    assert after["ETag"] == before["ETag"]
    # A role that may not edit learns only that.
    assert team["nurse"].put(edits[0][1], edits[0][2], content_type=J).status_code == 403
    # POST actions keep If-Match optional.
    ok = team["nurse"].post(
        f"/api/v1/patients/{pid}/orders/{oid}/cancel", {"reason": "duplicate"}, content_type=J
    )
    assert ok.status_code in (200, 403), ok.content


@pytest.mark.parametrize(
    "path",
    ["/api/v1/nothing-here", "/api/v1/patients/x/y/z/w/v", "/api/v2/patients", "/api", "/api/"],
)
def test_an_unknown_path_under_api_is_a_json_404(team: dict[str, Client], path: str) -> None:
    for method in ("get", "post", "delete"):
        r = getattr(team["clerk"], method)(path)
        assert r.status_code == 404, (method, path, r.status_code)
        assert r["Content-Type"] == PROBLEM and r.json()["status"] == 404


def test_a_method_a_path_does_not_take_is_a_json_405(team: dict[str, Client]) -> None:
    r = team["clerk"].delete("/api/v1/patients")
    assert r.status_code == 405 and r["Content-Type"] == PROBLEM
    assert "POST" in r["Allow"] and r.json()["status"] == 405


def test_the_openapi_document_lists_problems_if_match_and_the_consistency_token(
    team: dict[str, Client],
) -> None:
    doc = team["clerk"].get("/api/v1/openapi.json").json()
    put = doc["paths"]["/api/v1/patients/{patient_id}"]["put"]
    assert {p["name"]: p["required"] for p in put["parameters"] if p["in"] == "header"} == {
        "If-Match": True,
        "Idempotency-Key": False,
    }
    assert set(put["responses"]) >= {
        "200",
        "400",
        "401",
        "403",
        "404",
        "409",
        "412",
        "422",
        "428",
        "503",
    }
    assert list(put["responses"]["428"]["content"]) == [PROBLEM]
    assert "X-Consistency-Token" in put["responses"]["200"]["headers"]
    admitted = doc["paths"]["/api/v1/worklists/admitted"]["get"]
    assert "X-Consistency-Token" in {p["name"] for p in admitted["parameters"]}
    assert "Retry-After" in admitted["responses"]["503"]["headers"]
    assert "total" in doc["components"]["schemas"]["WorklistPage"]["properties"]
    order_in = doc["components"]["schemas"]["OrderIn"]
    assert order_in["additionalProperties"] is False
    for item in doc["paths"].values():
        for method, op in item.items():
            for status, answer in op["responses"].items():
                if int(status) >= 400:
                    assert list(answer["content"]) == [PROBLEM], (method, status)
