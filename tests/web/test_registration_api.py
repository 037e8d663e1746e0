"""The registration API's possible-duplicate check and the discharge API's note and
confirmed orders: 409 problems that list what the caller must look at, and write nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from bench.driver import Tokens, register
from bench.product_side import _TestClient
from hisadmin.models import ApiToken

pytestmark = pytest.mark.django_db
J = "application/json"
JOSE = {"given_name": "José", "family_name": "Müller", "birth_date": "1970-01-01", "sex": "male"}


def test_it_answers_409_possible_duplicate_with_the_candidates(team, his_store) -> None:
    clerk = team["clerk"]
    first = clerk.post("/api/v1/patients", JOSE, content_type=J).json()
    before = his_store.count()
    again = clerk.post("/api/v1/patients", {**JOSE, "mrn": "X000123"}, content_type=J)
    assert again.status_code == 409
    assert again["Content-Type"] == "application/problem+json"
    body = again.json()
    assert body["type"] == "/api/v1/problems/possible-duplicate"
    assert body["candidates"] == [
        {"id": first["id"], "mrn": first["mrn"], "name": "MÜLLER, José", "birth_date": "1970-01-01"}
    ]
    assert his_store.count() == before  # not even the MRN asked for stays held
    assert clerk.get("/api/v1/patients", {"mrn": "X000123"}).json() == []


def test_it_ignores_case_and_accents(team) -> None:
    clerk = team["clerk"]
    first = clerk.post("/api/v1/patients", JOSE, content_type=J).json()
    for given, family in (("JOSE", "muller"), ("jose", "MÜLLER"), (" José ", "Muller")):
        again = clerk.post(
            "/api/v1/patients", {**JOSE, "given_name": given, "family_name": family}, content_type=J
        )
        assert again.status_code == 409, (given, family)
        assert [c["id"] for c in again.json()["candidates"]] == [first["id"]]


def test_it_registers_with_confirm_not_duplicate(team) -> None:
    clerk = team["clerk"]
    first = clerk.post("/api/v1/patients", JOSE, content_type=J).json()
    second = clerk.post(
        "/api/v1/patients",
        {**JOSE, "given_name": "JOSE", "confirm_not_duplicate": True},
        content_type=J,
    )
    assert second.status_code == 201, second.content
    assert second.json()["id"] != first["id"]
    third = clerk.post("/api/v1/patients", JOSE, content_type=J)
    assert {c["mrn"] for c in third.json()["candidates"]} == {first["mrn"], second.json()["mrn"]}


def test_it_does_not_warn_for_another_birth_date(team) -> None:
    clerk = team["clerk"]
    clerk.post("/api/v1/patients", JOSE, content_type=J)
    other = clerk.post("/api/v1/patients", {**JOSE, "birth_date": "1970-01-02"}, content_type=J)
    assert other.status_code == 201


def test_it_discharges_with_a_note_and_the_orders_the_caller_expects(
    team, admit: Callable[..., str], his_store
) -> None:
    pid = admit("Leaving")
    order = team["doc"].post(
        f"/api/v1/patients/{pid}/orders",
        {"kind": "lab", "test_code": "CRP", "urgency": "stat"},
        content_type=J,
    )
    assert order.status_code == 201, order.content
    oid = order.json()["order_id"]
    before = his_store.count()
    refused = team["clerk"].post(
        f"/api/v1/patients/{pid}/discharge",
        {"disposition": "home", "note": "Well.", "cancel_orders": []},
        content_type=J,
    )
    assert refused.status_code == 409
    assert refused.json()["type"] == "/api/v1/problems/orders-changed"
    assert refused.json()["active_orders"] == [oid]
    assert his_store.count() == before
    done = team["clerk"].post(
        f"/api/v1/patients/{pid}/discharge",
        {"disposition": "home", "note": "Well.", "cancel_orders": [oid]},
        content_type=J,
    )
    assert done.status_code == 200, done.content
    assert done.json()["discharge_note"] == "Well."
    assert team["clerk"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()["status"] == "cancelled"


def test_a_new_request_for_the_same_person_is_a_question_not_a_replay(team) -> None:
    clerk: Client = team["clerk"]
    first = clerk.post("/api/v1/patients", JOSE, content_type=J, HTTP_IDEMPOTENCY_KEY="k1")
    replay = clerk.post("/api/v1/patients", JOSE, content_type=J, HTTP_IDEMPOTENCY_KEY="k1")
    assert replay.status_code == 201 and replay.json()["id"] == first.json()["id"]
    assert (
        clerk.post("/api/v1/patients", JOSE, content_type=J, HTTP_IDEMPOTENCY_KEY="k2").status_code
        == 409
    )


def test_the_benchs_clerk_confirms_a_possible_duplicate_and_registers(
        team, his_store, make_user) -> None:
    """The bench's stays register new patients whose names and birth dates now and then meet a
    seeded patient's: its driver answers the 409 as a clerk does (another person) instead of
    stopping the client (``bench.driver.register``), over the API with a clerk's token."""
    clerk = _TestClient()  # the driver's client protocol over Django's test client
    token = ApiToken.issue(make_user("bench-clerk", "clerk"), "bench")[1]
    tokens = Tokens(admin=token, nurse=token)
    first = register(clerk, tokens, JOSE)
    before = his_store.count()
    second = register(clerk, tokens, JOSE)
    assert second["id"] != first["id"] and second["family_name"] == JOSE["family_name"]
    assert his_store.count() > before
    assert team["clerk"].post("/api/v1/patients", JOSE, content_type=J).status_code == 409
