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
