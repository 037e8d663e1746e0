"""Issue-level proof of the slice: API → batch → change feed → relay → Redis → Celery → view."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.roles import ensure_groups
from hisadmin.models import ApiToken
from patients import use_cases
from tests.integration.processes import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def clerk_api(running_stack, stack_settings) -> Client:
    from hisadmin.core.store import get_store

    list(use_cases.load_reference_data(UnitOfWork(get_store()), actor=SYSTEM_ACTOR))
    ensure_groups()
    user = User.objects.create_user("clerk-it", password="pw-clerk-it-123")
    user.groups.add(Group.objects.get(name="clerk"))
    _, raw = ApiToken.issue(user, "it")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_it_lists_a_patient_admitted_through_the_api_in_the_worklist(clerk_api: Client) -> None:
    created = clerk_api.post("/api/v1/patients", {
        "given_name": "Inés", "family_name": "Ibáñez", "birth_date": "1970-02-03",
        "sex": "female"}, content_type="application/json")
    assert created.status_code == 201, created.content
    patient = created.json()
    admitted = clerk_api.post(f"/api/v1/patients/{patient['id']}/admissions", {
        "department_id": "SURG", "ward_id": "SURG-1", "bed": "S103", "reason": "Hernia repair",
    }, content_type="application/json")
    assert admitted.status_code == 201, admitted.content
    committed = time.monotonic()

    def listed() -> list:
        page = clerk_api.get("/api/v1/worklists/admitted", {"department": "SURG"}).json()
        return [r for r in page["items"] if r["patient_id"] == patient["id"]]

    rows = wait_for(listed, timeout=15, what="the patient in the Admitted worklist")
    assert rows[0]["bed"] == "S103"
    assert rows[0]["mrn"] == patient["mrn"]
    assert time.monotonic() - committed < 15

    # Name search is accent- and case-insensitive.
    found = clerk_api.get("/api/v1/worklists/admitted", {"department": "SURG", "q": "iba"}).json()
    assert [r["patient_id"] for r in found["items"]] == [patient["id"]]


def test_it_drops_a_discharged_patient_from_the_worklist(clerk_api: Client) -> None:
    pid = clerk_api.post("/api/v1/patients", {
        "given_name": "Tom", "family_name": "Hardy", "birth_date": "1977-09-15"},
        content_type="application/json").json()["id"]
    clerk_api.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-2", "reason": "Observation"},
        content_type="application/json")

    def ids() -> set[str]:
        page = clerk_api.get("/api/v1/worklists/admitted", {"department": "MED"}).json()
        return {r["patient_id"] for r in page["items"]}

    wait_for(lambda: pid in ids(), timeout=15, what="admission to show")
    assert clerk_api.post(f"/api/v1/patients/{pid}/discharge", {"disposition": "home"},
                          content_type="application/json").status_code == 200
    wait_for(lambda: pid not in ids(), timeout=15, what="discharge to show")
