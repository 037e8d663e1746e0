from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.roles import ensure_groups
from hisadmin.models import ApiToken
from patients import use_cases


@pytest.fixture
def make_user(db: None, settings: object) -> Callable[..., User]:
    # A fast hasher: test users need a password, not a strong one (PBKDF2 costs ~0.3 s each).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # type: ignore[attr-defined]
    ensure_groups()

    def make(username: str, *roles: str) -> User:
        user = User.objects.filter(username=username).first() or \
            User.objects.create_user(username, password=f"pw-{username}-123456")
        user.groups.add(*Group.objects.filter(name__in=roles))
        return user

    return make


@pytest.fixture
def api_client(make_user: Callable[..., User]) -> Callable[..., Client]:
    """``api_client("clerk")`` → a client sending a bearer token of a user with that role."""

    def make(*roles: str) -> Client:
        user = make_user("api-" + "-".join(roles or ("none",)), *roles)
        _, raw = ApiToken.issue(user, "tests")
        return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    return make


@pytest.fixture
def reference_data(his_store: DocumentStore) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))


@pytest.fixture
def team(api_client: Callable[..., Client], reference_data: None) -> dict[str, Client]:
    """API clients of a clerk, a clinician and a nurse, on a store with reference data."""
    return {"clerk": api_client("clerk"), "doc": api_client("clinician"),
            "nurse": api_client("nurse")}


@pytest.fixture
def admit(team: dict[str, Client]) -> Callable[..., str]:
    """``admit(family, bed="", reason=...)`` registers a patient, admits them to MED-1
    through the API and returns their id."""

    def admit(family: str, *, given: str = "Ann", bed: str = "", reason: str = "Pneumonia",
              birth_date: str = "1955-02-02") -> str:
        pid = team["clerk"].post("/api/v1/patients", {
            "given_name": given, "family_name": family, "birth_date": birth_date},
            content_type="application/json").json()["id"]
        r = team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
            "department_id": "MED", "ward_id": "MED-1", "bed": bed, "reason": reason},
            content_type="application/json")
        assert r.status_code == 201, r.content
        return pid

    return admit
