"""The FHIR facade's errors over HTTP: 401 without credentials, 403 without a clinical role,
404 for unknown ids and types, 400 for malformed parameters (never a 5xx), 405 for writes;
each an OperationOutcome. The CapabilityStatement is public and says what is served."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from fhir.resources.R4B.capabilitystatement import CapabilityStatement
from fhir.resources.R4B.operationoutcome import OperationOutcome

from fhir_facade import ids

pytestmark = pytest.mark.django_db
F = "/fhir/R4"
TYPES = (
    "Patient",
    "Encounter",
    "AllergyIntolerance",
    "MedicationRequest",
    "MedicationAdministration",
    "ServiceRequest",
    "Observation",
    "DiagnosticReport",
)
NASTY = (
    "",
    " ",
    "%",
    "|",
    "/",
    "Patient/",
    "ge",
    "2020-13-45",
    "x" * 3000,
    "' OR 1=1 --",
    "１２３",
    "\u0000",
    "Patient/../../etc",
    "eq1955-02-02,ge",
    "a,b,,c",
)


def outcome(r: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.content
    assert r["Content-Type"] == "application/fhir+json"
    body = r.json()
    OperationOutcome.model_validate(body)
    if code is not None:
        assert body["issue"][0]["code"] == code, body
    return body


@pytest.fixture
def pid(admit: Callable[..., str]) -> str:
    return admit("Errwood", given="Ed")


@pytest.mark.parametrize(
    "path",
    [f"/{t}?patient=x" for t in TYPES[1:]]
    + ["/Patient?name=ab", "/Patient/abc", "/Observation/abc"],
)
def test_it_answers_401_without_credentials(client: Client, path: str) -> None:
    r = client.get(F + path)
    outcome(r, 401, "login")
    assert r["WWW-Authenticate"].startswith("Bearer")


def test_it_answers_401_to_a_token_it_does_not_know(reference_data, pid) -> None:
    r = Client(HTTP_AUTHORIZATION="Bearer his_not-a-token").get(f"{F}/Patient/{pid}")
    outcome(r, 401, "login")
    r = Client(HTTP_AUTHORIZATION="Basic dXNlcjpwdw==").get(f"{F}/Patient/{pid}")
    outcome(r, 401, "login")


@pytest.mark.parametrize("roles", [("admin",), ()])
def test_it_answers_403_to_a_user_without_a_clinical_role(api_client, pid, roles) -> None:
    client = api_client(*roles)
    outcome(client.get(f"{F}/Patient/{pid}"), 403, "forbidden")
    outcome(client.get(f"{F}/Encounter?patient={pid}"), 403, "forbidden")


def test_a_logged_in_browser_reads_with_its_session(make_user, pid) -> None:
    browser = Client()
    browser.force_login(make_user("fhir-clerk", "clerk"))
    r = browser.get(f"{F}/Patient/{pid}")
    assert r.status_code == 200 and r.json()["id"] == pid
    admin = Client()
    admin.force_login(make_user("fhir-admin", "admin"))
    outcome(admin.get(f"{F}/Patient/{pid}"), 403, "forbidden")


def test_the_capability_statement_is_public_and_lists_what_is_served(client: Client) -> None:
    r = client.get(f"{F}/metadata")
    assert r.status_code == 200 and r["Content-Type"] == "application/fhir+json"
    body = r.json()
    CapabilityStatement.model_validate(body)
    assert body["fhirVersion"] == "4.0.1" and "R4B" in body["software"]["version"]
    assert body["implementation"]["url"] == "http://testserver/fhir/R4"
    served = {res["type"]: res for res in body["rest"][0]["resource"]}
    assert set(served) == set(TYPES)
    for res in served.values():
        assert [i["code"] for i in res["interaction"]] == ["read", "search-type"]
    assert {p["name"] for p in served["Patient"]["searchParam"]} >= {
        "identifier",
        "name",
        "birthdate",
    }
    assert {p["name"] for p in served["Encounter"]["searchParam"]} >= {"patient", "status"}


@pytest.mark.parametrize("kind", TYPES)
def test_an_unknown_id_is_a_404_operation_outcome(team, pid, kind) -> None:
    for rid in (
        "nope",
        ids.pair(pid, "2f1e4f8e-9a0b-4c1d-8e2f-3a4b5c6d7e8f"),
        ids.indexed(pid, pid, 7),
        "x" * 80,
        "a_b",
    ):
        outcome(team["clerk"].get(f"{F}/{kind}/{rid}"), 404, "not-found")


def test_an_unknown_type_or_path_is_a_404_operation_outcome(team) -> None:
    outcome(team["clerk"].get(f"{F}/Practitioner/abc"), 404, "not-supported")
    outcome(team["clerk"].get(f"{F}/Practitioner?name=ab"), 404, "not-supported")
    outcome(team["clerk"].get(f"{F}/Patient/abc/_history"), 404, "not-found")


@pytest.mark.parametrize(
    "query",
    [
        "Patient?name=ab&_count=abc",
        "Patient?name=ab&_count=-1",
        "Patient?name=ab&_offset=x",
        "Patient?name=ab&birthdate=notadate",
        "Patient?name=ab&birthdate=1955-02-30",
        "Patient?name=ab&birthdate=sa1955",
        "Patient?name=a",
        "Patient?name=ab&family=ab",
        "Patient?given=Ann",
        "Patient?name=ab&_cursor=not-a-cursor",
        "Patient?name:exact=ab",
        "Patient?identifier=H1&identifier=H2",
        "Patient?_id=a/b/c",
        "Encounter?patient=PID&status=bogus",
        "Encounter?status=finished",
        "Encounter?patient=Group/PID",
        "Encounter?patient=PID&patient=other",
        "Observation?patient=a%20b",
        "ServiceRequest?patient=PID&category=surgery",
        "AllergyIntolerance?patient=PID&clinical-status=gone",
        "MedicationRequest?patient=PID&status=",
        "DiagnosticReport?patient=PID&_count=1.5",
    ],
)
def test_a_malformed_parameter_is_a_400_operation_outcome(team, pid, query) -> None:
    outcome(team["doc"].get(f"{F}/{query.replace('PID', pid)}"), 400)


@pytest.mark.parametrize(
    "query",
    [
        "Patient",
        "Patient?birthdate=ge1955-02-02",  # open: every year after
        "Patient?birthdate=ge1900&birthdate=le1990",  # more than ten years
        "Observation",
        "MedicationAdministration?status=completed",
    ],
)
def test_a_search_no_partition_answers_is_refused_as_too_costly(team, query) -> None:
    outcome(team["doc"].get(f"{F}/{query}"), 400, "too-costly")


def test_unknown_parameters_are_ignored_unless_strict_handling_is_asked(team, pid) -> None:
    r = team["doc"].get(f"{F}/Encounter?patient={pid}&_sort=date&foo=1")
    assert r.status_code == 200
    bundle = r.json()
    assert bundle["total"] == 1
    [note] = [e for e in bundle["entry"] if e["search"]["mode"] == "outcome"]
    assert "foo" in note["resource"]["issue"][0]["diagnostics"]
    assert "foo" not in bundle["link"][0]["url"]
    strict = team["doc"].get(f"{F}/Encounter?patient={pid}&foo=1", HTTP_PREFER="handling=strict")
    outcome(strict, 400, "not-supported")


def test_only_json_is_served(team, pid) -> None:
    r = team["doc"].get(f"{F}/Encounter?patient={pid}&_format=xml")
    outcome(r, 406, "not-supported")
    assert team["doc"].get(f"{F}/Encounter?patient={pid}&_format=json").status_code == 200


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
def test_writes_are_405(team, pid, method) -> None:
    r = getattr(team["doc"], method)(
        f"{F}/Patient/{pid}", "{}", content_type="application/fhir+json"
    )
    outcome(r, 405, "not-supported")
    assert r["Allow"] == "GET, HEAD"
    outcome(team["doc"].post(f"{F}/Patient", "{}", content_type="application/fhir+json"), 405)


@pytest.mark.parametrize("value", NASTY)
def test_no_parameter_value_makes_a_server_error(team, pid, value) -> None:
    for kind in TYPES:
        for name in (
            "patient",
            "status",
            "name",
            "identifier",
            "birthdate",
            "_count",
            "_cursor",
            "category",
            "_id",
            "family",
        ):
            query = {name: value}
            if kind != "Patient" and name != "patient":
                query["patient"] = pid
            r = team["doc"].get(f"{F}/{kind}", query)
            assert r.status_code < 500, (kind, name, value, r.content[:300])
            assert r["Content-Type"] == "application/fhir+json"
        r = team["doc"].get(f"{F}/{kind}/{value}")
        assert r.status_code in (200, 404), (kind, value)
