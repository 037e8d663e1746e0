"""A path and query string over 4 KB: a 414 in the caller's language (problem JSON under
/api/, an OperationOutcome under /fhir/, the error page elsewhere), never gunicorn's HTML."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from hisadmin import errors

pytestmark = pytest.mark.django_db

# A name search pasted from elsewhere: accents and a decimal comma, percent-encoded.
LONG_QUERY = "q=" + "Gonçalves%2C0,5%20" * 300


def test_it_answers_an_over_long_api_url_with_a_problem() -> None:
    response = Client().get(f"/api/v1/worklists/admitted?{LONG_QUERY}",
                            HTTP_AUTHORIZATION="Bearer his_nothing")
    assert response.status_code == 414
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "/api/v1/problems/uri-too-long"
    assert body["max_length"] == errors.MAX_REQUEST_URI == 4096
    assert "at most 4,096 are read" in body["detail"]


def test_it_answers_an_over_long_fhir_url_with_an_operation_outcome() -> None:
    response = Client().get(f"/fhir/R4/Patient?name={'x' * 5000}")
    assert response.status_code == 414
    assert response["Content-Type"] == "application/fhir+json"
    issue = response.json()["issue"][0]
    assert (response.json()["resourceType"], issue["code"]) == ("OperationOutcome", "too-long")


def test_it_answers_an_over_long_page_url_with_the_error_page() -> None:
    response = Client().get(f"/admin/worklists/admitted/?{LONG_QUERY}")
    assert response.status_code == 414
    assert response["Content-Type"].startswith("text/html")
    assert "Address too long" in response.content.decode()


def test_it_reads_a_url_of_exactly_the_limit() -> None:
    path = "/api/v1/worklists/admitted?q="
    response = Client().get(path + "x" * (errors.MAX_REQUEST_URI - len(path)))
    assert response.status_code == 401  # read on: no token, hence unauthenticated


def test_it_documents_the_414_on_every_operation(api_client: Callable[..., Client]) -> None:
    schema = api_client("clerk").get("/api/v1/openapi.json").json()
    operations = [op for item in schema["paths"].values() for m, op in item.items()
                  if m in ("get", "post", "put", "patch", "delete")]
    assert operations and all("414" in op["responses"] for op in operations)
    answer = operations[0]["responses"]["414"]
    assert "4,096 bytes" in answer["description"]
    assert "application/problem+json" in answer["content"]
