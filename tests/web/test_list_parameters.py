"""One rule for list parameters: a sort, direction or filter value a list does not offer is a
400 problem of type bad-parameter naming the parameter and the values it takes, on every
operation of the API (found in its own OpenAPI document) and on every worklist page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

BAD = "bogus"


def _enum(schema: dict[str, Any]) -> list[Any] | None:
    if "enum" in schema:
        return schema["enum"]
    for option in schema.get("anyOf", []):
        if "enum" in option:
            return option["enum"]
    return None


def _closed_query_parameters(schema: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(path, parameter, the values it takes) of every GET's query parameter that takes a
    closed set of values: an enumeration or a boolean."""
    found = []
    for path, item in schema["paths"].items():
        for parameter in item.get("get", {}).get("parameters", []):
            if parameter["in"] != "query":
                continue
            values = _enum(parameter["schema"])
            if values is None and parameter["schema"].get("type") == "boolean":
                values = ["true", "false"]
            if values is not None:
                found.append((path, parameter["name"], [str(v) for v in values if v != ""]))
    return found


@pytest.fixture
def api(api_client: Callable[..., Client], his_patient: Callable[..., Any]
        ) -> tuple[Client, dict[str, str]]:
    seeded = his_patient("Ødegård", given="Åsa")
    return api_client("admin"), {"patient_id": seeded.id, "code": "MED-1"}


def test_it_finds_the_lists_closed_parameters_in_the_openapi(
        api: tuple[Client, dict[str, str]]) -> None:
    client, _ = api
    found = {(p, n) for p, n, _ in _closed_query_parameters(
        client.get("/api/v1/openapi.json").json())}
    assert {("/api/v1/worklists/admitted", "sort"), ("/api/v1/worklists/admitted", "dir"),
            ("/api/v1/worklists/orders", "status"), ("/api/v1/worklists/orders", "kind"),
            ("/api/v1/worklists/my-orders", "urgency"),
            ("/api/v1/worklists/results-to-review", "abnormal"),
            ("/api/v1/patients/{patient_id}/orders", "active"),
            ("/api/v1/hl7/messages", "status")} <= found


def test_every_list_with_query_parameters_documents_its_400_problem(
        api: tuple[Client, dict[str, str]]) -> None:
    client, _ = api
    schema = client.get("/api/v1/openapi.json").json()
    lists = {path: item["get"] for path, item in schema["paths"].items()
             if any(p["in"] == "query" for p in item.get("get", {}).get("parameters", []))}
    assert {"/api/v1/worklists/medications-due", "/api/v1/worklists/observations-due",
            "/api/v1/wards/census", "/api/v1/wards", "/api/v1/hl7/messages"} <= set(lists)
    undocumented = [path for path, op in lists.items()
                    if list(op["responses"].get("400", {}).get("content", {}))
                    != ["application/problem+json"]]
    assert not undocumented, undocumented
    problem = schema["components"]["schemas"]["Problem"]["properties"]
    assert {"parameter", "allowed"} <= set(problem)
    assert "bad-parameter" in lists["/api/v1/wards/census"]["responses"]["400"]["description"]


def test_every_closed_list_parameter_refuses_a_bad_value_with_a_400_naming_it(
        api: tuple[Client, dict[str, str]]) -> None:
    client, ids = api
    cases = _closed_query_parameters(client.get("/api/v1/openapi.json").json())
    wrong = []
    for path, name, allowed in cases:
        url = path.format(**ids) + f"?{name}={BAD}"
        response = client.get(url)
        body = response.json() if response["Content-Type"].endswith("json") else {}
        if (response.status_code, response["Content-Type"], body.get("type"),
                body.get("parameter"), body.get("allowed")) != (
                400, "application/problem+json", "/api/v1/problems/bad-parameter", name,
                allowed) or "bogus" not in body.get("detail", ""):
            wrong.append(f"{url}: {response.status_code} {body}")
    assert len(cases) >= 20 and not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("url", "parameter"), [
    ("/api/v1/worklists/admitted?department=NOPE", "department"),
    ("/api/v1/worklists/admitted?ward=MED-9", "ward"),
    ("/api/v1/worklists/orders?department=nope", "department"),
    ("/api/v1/worklists/my-orders?department=X", "department"),
    ("/api/v1/worklists/medications-due?ward=MED-9", "ward"),
    ("/api/v1/worklists/medications-due?ward=", "ward"),
    ("/api/v1/worklists/observations-due?ward=MED-9", "ward"),
    ("/api/v1/worklists/at-risk?department=NOPE", "department"),
    ("/api/v1/worklists/at-risk?department=MED&ward=MED-9", "ward"),
    ("/api/v1/wards/census?ward=MED-9", "ward"),
    ("/api/v1/wards?department=NOPE", "department"),
])
def test_an_unknown_department_or_ward_is_a_bad_parameter_listing_the_codes(
        api_client: Callable[..., Client], reference_data: None, url: str,
        parameter: str) -> None:
    body = api_client("nurse").get(url).json()
    assert (body["status"], body["type"], body.get("parameter")) == (
        400, "/api/v1/problems/bad-parameter", parameter)
    assert ("MED" if parameter == "department" else "MED-1") in body["allowed"]


def test_a_number_out_of_range_is_a_bad_parameter_saying_the_range(
        api: tuple[Client, dict[str, str]]) -> None:
    client, _ = api
    body = client.get("/api/v1/worklists/admitted?page_size=0").json()
    assert (body["status"], body["type"], body["parameter"], body["allowed"]) == (
        400, "/api/v1/problems/bad-parameter", "page_size", [])
    assert "greater than or equal to 1" in body["detail"]


def test_good_values_still_answer(api_client: Callable[..., Client],
                                  reference_data: None) -> None:
    client = api_client("clinician")
    for url in ("/api/v1/worklists/admitted?sort=name&dir=desc&department=MED&ward=MED-1",
                "/api/v1/worklists/orders?status=created&kind=medication&urgency=routine",
                "/api/v1/worklists/orders?status=&kind="):
        assert client.get(url).status_code == 200, url


# ------------------------------------------------------------------------------- pages

PAGES = [
    ("/admin/worklists/admitted/?sort=bogus", "sort", "name"),
    ("/admin/worklists/admitted/?dir=up", "dir", "desc"),
    ("/admin/worklists/admitted/?department=NOPE", "department", "MED"),
    ("/admin/worklists/admitted/?ward=MED-9", "ward", "MED-1"),
    ("/admin/worklists/orders/?status=bogus", "status", "created"),
    ("/admin/worklists/orders/?kind=bogus", "kind", "medication"),
    ("/admin/worklists/my-orders/?urgency=bogus", "urgency", "stat"),
    ("/admin/worklists/patients/?q=Smith&sort=bogus", "sort", "mrn"),
    ("/admin/worklists/results-to-review/?kind=medication", "kind", "lab"),
    ("/admin/worklists/results-to-review/?abnormal=2", "abnormal", "1"),
    ("/admin/worklists/medications-due/?ward=MED-9", "ward", "MED-1"),
    ("/admin/worklists/observations-due/?ward=MED-9", "ward", "MED-1"),
    ("/admin/worklists/at-risk/?department=NOPE", "department", "MED"),
    ("/admin/worklists/at-risk/?sort=bogus", "sort", "score"),
    ("/admin/worklists/census/?ward=MED-9", "ward", "MED-1"),
]


@pytest.mark.parametrize(("url", "parameter", "an_allowed_value"), PAGES)
def test_a_worklist_page_answers_a_bad_parameter_with_the_400_page_naming_it(
        make_user: Callable[..., Any], reference_data: None, url: str, parameter: str,
        an_allowed_value: str) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(make_user("lists-clinician", "clinician", "nurse"))
    response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 400, html[:300]
    assert f"({parameter})" in html and an_allowed_value in html
