"""Login everywhere, token auth on the API, health reporting."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from hisadmin.api import TokenAuth
from hisadmin.core.cache import ExpiringCache
from hisadmin.core.policy import allows
from hisadmin.core.roles import Role, ensure_groups, roles_of
from hisadmin.models import ApiToken, hash_token
from testkit.fixtures import TEST_PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def clinician() -> User:
    ensure_groups()
    user = User.objects.create_user("doc", password=TEST_PASSWORD)
    user.groups.add(Group.objects.get(name="clinician"))
    return user


def test_it_redirects_anonymous_users_to_login(client: Client) -> None:
    response = client.get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_it_refuses_the_api_without_credentials(client: Client) -> None:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 401


def test_it_lets_non_staff_clinicians_into_the_admin(client: Client, clinician: User,
                                                       his_store: object) -> None:
    client.force_login(clinician)
    assert client.get("/admin/").status_code == 200


def test_it_keeps_django_user_admin_for_admins_only(client: Client, clinician: User) -> None:
    client.force_login(clinician)
    assert client.get("/admin/auth/user/").status_code == 403


def test_the_menu_names_a_model_page_for_a_permission_given_by_hand(
        client: Client, clinician: User, his_store: object) -> None:
    """Clinical roles hold no model permission, so their menu asks no model admin; one given
    to a user by hand (a superuser may) puts that model's page in the user's menu."""
    events = "/admin/hisadmin/securityevent/"
    client.force_login(clinician)
    assert events not in client.get("/admin/").content.decode()
    clinician.user_permissions.add(Permission.objects.get(codename="view_securityevent"))
    client.force_login(User.objects.get(pk=clinician.pk))
    assert events in client.get("/admin/").content.decode()
    assert client.get(events).status_code == 200


def test_it_stores_only_the_token_hash_and_authenticates_with_it(clinician: User) -> None:
    record, raw = ApiToken.issue(clinician, "lab system")
    assert record.key_hash == hash_token(raw)
    assert raw not in (record.key_hash, record.prefix)
    client = Client()
    assert client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    assert client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401


def test_it_looks_a_token_up_once_per_cache_period(
        clinician: User, django_assert_num_queries: Callable[..., Any], monkeypatch) -> None:
    # A period longer than the first request may take on a busy machine (the OpenAPI
    # document takes seconds to build there): the second request falls inside it.
    monkeypatch.setattr(TokenAuth, "_cache", ExpiringCache(60.0))
    _, raw = ApiToken.issue(clinician, "poller")
    client = Client()
    assert client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    with django_assert_num_queries(0):
        response = client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200


def test_it_records_last_use_at_most_once_a_minute(clinician: User) -> None:
    record, raw = ApiToken.issue(clinician, "poller")
    client = Client()
    client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    record.refresh_from_db()
    first_use = record.last_used
    assert first_use is not None
    TokenAuth.forget()  # even a fresh lookup within the minute writes nothing
    client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    record.refresh_from_db()
    assert record.last_used == first_use
    ApiToken.objects.filter(pk=record.pk).update(last_used=first_use - timedelta(minutes=2))
    TokenAuth.forget()  # a queryset update sends no signal
    client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    record.refresh_from_db()
    assert record.last_used > first_use


def test_it_refuses_a_cached_token_of_a_deactivated_user(clinician: User) -> None:
    _, raw = ApiToken.issue(clinician, "poller")
    client = Client()
    assert client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    clinician.is_active = False
    clinician.save()  # forgets every cached lookup of this process
    assert client.get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_it_ignores_revoked_tokens(clinician: User) -> None:
    record, raw = ApiToken.issue(clinician, "old")
    record.revoked = True
    record.save()
    response = Client().get("/api/v1/openapi.json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 401


def test_it_gives_roles_by_group_and_all_roles_to_superusers(clinician: User) -> None:
    assert roles_of(clinician) == {Role.CLINICIAN}
    assert allows(clinician, "place_order") and not allows(clinician, "admit")
    boss = User.objects.create_superuser("boss", password=TEST_PASSWORD)
    assert roles_of(boss) == set(Role)


def test_it_reports_health_of_store_broker_and_relay(client: Client, his_store: object,
                                                      settings: object) -> None:
    settings.CELERY_BROKER_URL = ""  # type: ignore[attr-defined]
    response = client.get("/healthz")
    body = response.json()
    assert body["store"]["ok"] is True
    assert body["broker"]["ok"] is False  # no broker configured
    assert body["relay"]["ok"] is False  # no relay has taken a lease
    assert response.status_code == 503
