from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.handlers.wsgi import WSGIHandler
from django.db import transaction
from django.test import Client

from hisadmin.core.roles import ensure_groups
from hisadmin.models import ApiToken
from tests.web.keep_connection import keeping_the_tests_connection


# The test kit's fixtures (testkit.fixtures) under the names these tests use.
@pytest.fixture
def make_user(his_user: Callable[..., User]) -> Callable[..., User]:
    return his_user


@pytest.fixture
def api_client(his_api_client: Callable[..., Client]) -> Callable[..., Client]:
    """``api_client("clerk")`` → a client sending a bearer token of a user with that role."""
    return his_api_client


@pytest.fixture
def reference_data(his_reference_data: None) -> None:
    return his_reference_data


@pytest.fixture
def team(api_client: Callable[..., Client], reference_data: None) -> dict[str, Client]:
    """API clients of a clerk, a clinician and a nurse, on a store with reference data."""
    return {"clerk": api_client("clerk"), "doc": api_client("clinician"),
            "nurse": api_client("nurse")}


@pytest.fixture
def admit(team: dict[str, Client]) -> Callable[..., str]:
    """``admit(family, bed="", reason=...)`` registers a patient, admits them to MED-1
    through the API and returns their id. Their allergies are asked (no known allergies)
    unless ``allergies_asked=False``: a medication ordered otherwise needs an override."""

    def admit(family: str, *, given: str = "Ann", bed: str = "", reason: str = "Pneumonia",
              birth_date: str = "1955-02-02", allergies_asked: bool = True) -> str:
        pid = team["clerk"].post("/api/v1/patients", {
            "given_name": given, "family_name": family, "birth_date": birth_date},
            content_type="application/json").json()["id"]
        r = team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
            "department_id": "MED", "ward_id": "MED-1", "bed": bed, "reason": reason},
            content_type="application/json")
        assert r.status_code == 201, r.content
        if allergies_asked:
            asked = team["doc"].post(f"/api/v1/patients/{pid}/allergies/none",
                                     content_type="application/json")
            assert asked.status_code in (200, 201), asked.content
        return pid

    return admit


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where browser tests put their screenshots: ``$SCREENSHOT_DIR`` (to look at them), else
    the test's temporary directory (where none is taken: tests/conftest.py)."""
    folder = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def openapi_schema(django_db_setup: None, django_db_blocker: Any) -> Any:
    """The API's OpenAPI document as schemathesis loads it from the WSGI application, once
    per worker (it takes a second or two; each role's test generates its own cases from it and
    sends its own token). The clerk who reads it exists inside a transaction that is rolled
    back: no test sees that user or its token."""
    import schemathesis

    with django_db_blocker.unblock(), transaction.atomic():
        ensure_groups()
        reader = User.objects.create_user("openapi-reader")
        reader.groups.add(Group.objects.get(name="clerk"))
        _, raw = ApiToken.issue(reader, "openapi")
        with keeping_the_tests_connection():
            schema = schemathesis.openapi.from_wsgi(
                "/api/v1/openapi.json", WSGIHandler(), headers={"Authorization": f"Bearer {raw}"})
        transaction.set_rollback(True)
    return schema
