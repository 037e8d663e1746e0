"""The same product on the Azure adapter: the API, relay and worker talk Cosmos over the wire.

Proves that setting COSMOS_ENDPOINT/COSMOS_KEY is all it takes to move off the embedded store:
the relay reads the change feed through the SDK, leases live in a Cosmos container.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import store as handles
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.roles import ensure_groups
from hisadmin.embedded_redis import EmbeddedRedis
from hisadmin.models import ApiToken
from patients import use_cases
from testkit.fixtures import TEST_PASSWORD
from tests.conftest import WIRE_KEY
from tests.integration.processes import stack_env, start_relay, start_worker, stop, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def cosmos_stack(wire_endpoint: str, tmp_path: Path, settings) -> Iterator[dict]:
    database = "it-" + uuid.uuid4().hex[:8]
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "backend": "azure",
                               "endpoint": wire_endpoint, "key": WIRE_KEY,
                               "database": database, "connection_verify": False}
    handles.reset_handles()
    call_command("cosmos_init", stdout=open("/dev/null", "w"))
    redis = EmbeddedRedis(tmp_path / "redis")
    settings.CELERY_BROKER_URL = redis.celery_url
    env = stack_env(tmp_path / "unused.sqlite3", tmp_path / "var", redis.celery_url,
                    COSMOS_ENDPOINT=wire_endpoint, COSMOS_KEY=WIRE_KEY,
                    COSMOS_DATABASE=database, COSMOS_VERIFY_TLS="false")
    worker = start_worker(env, tmp_path / "worker.log")
    relay = start_relay(env, tmp_path / "relay.log", "--lease-ttl", "3")
    yield {"database": database}
    stop(relay)
    stop(worker)
    redis.shutdown()
    handles.reset_handles()


def test_it_runs_the_slice_on_the_azure_adapter(cosmos_stack: dict) -> None:
    list(use_cases.load_reference_data(UnitOfWork(handles.get_store()), actor=SYSTEM_ACTOR))
    ensure_groups()
    user = User.objects.create_user("clerk-wire", password=TEST_PASSWORD)
    user.groups.add(Group.objects.get(name="clerk"))
    _, raw = ApiToken.issue(user, "wire")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    patient = api.post("/api/v1/patients", {"given_name": "Wiremu", "family_name": "Tane",
                                            "birth_date": "1966-06-06"},
                       content_type="application/json").json()
    response = api.post(f"/api/v1/patients/{patient['id']}/admissions",
                        {"department_id": "PAED", "ward_id": "PAED-1", "reason": "Test"},
                        content_type="application/json")
    assert response.status_code == 201, response.content

    def listed() -> bool:
        page = api.get("/api/v1/worklists/admitted", {"department": "PAED"}).json()
        return any(r["patient_id"] == patient["id"] for r in page["items"])

    wait_for(listed, timeout=20, what="the patient in the worklist (Cosmos over the wire)")
    assert handles.get_store().request_charge_total > 0  # type: ignore[attr-defined]
