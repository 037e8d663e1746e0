"""The patients API: register, admit, discharge; errors are specific and write nothing."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ANA = {"given_name": "Ana", "family_name": "García", "birth_date": "1980-05-01", "sex": "female"}


@pytest.fixture
def clerk(api_client, reference_data) -> Client:
    return api_client("clerk")


def _count(store) -> int:
    return store.count()


def test_it_registers_and_reads_back_with_an_etag(clerk: Client) -> None:
    created = clerk.post("/api/v1/patients", ANA, content_type="application/json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["mrn"].startswith("H")
    read = clerk.get(f"/api/v1/patients/{body['id']}")
    assert read.status_code == 200
    assert read["ETag"] == body["etag"]
    found = clerk.get("/api/v1/patients", {"mrn": body["mrn"].lower()})
    assert [p["id"] for p in found.json()] == [body["id"]]


def test_it_admits_and_records_the_audit_trail(clerk: Client) -> None:
    pid = clerk.post("/api/v1/patients", ANA, content_type="application/json").json()["id"]
    admitted = clerk.post(f"/api/v1/patients/{pid}/admissions",
                          {"department_id": "CARD", "ward_id": "CARD-A", "bed": "A02",
                           "reason": "Chest pain"}, content_type="application/json")
    assert admitted.status_code == 201, admitted.content
    trail = clerk.get(f"/api/v1/patients/{pid}/events").json()["items"]
    assert [e["type"] for e in trail] == ["AdmissionStarted", "PatientRegistered"]
    assert {e["actor"]["username"] for e in trail} == {"api-clerk"}


@pytest.mark.parametrize(("payload", "field"), [
    ({**ANA, "given_name": ""}, "given_name"),
    ({**ANA, "birth_date": "1980-13-45"}, "birth_date"),
    ({k: v for k, v in ANA.items() if k != "family_name"}, "family_name"),
    ({**ANA, "birth_date": "2999-01-01"}, "birth_date"),
    ({**ANA, "mrn": "bad mrn!"}, "mrn"),
])
def test_it_rejects_bad_registrations_with_the_field_and_writes_nothing(
        clerk: Client, his_store, payload: dict, field: str) -> None:
    before = _count(his_store)
    response = clerk.post("/api/v1/patients", payload, content_type="application/json")
    assert response.status_code == 422, response.content
    assert field in {e["field"] for e in response.json()["errors"]}
    assert _count(his_store) == before


def test_it_refuses_a_duplicate_mrn_with_409_and_writes_nothing(clerk: Client, his_store) -> None:
    assert clerk.post("/api/v1/patients", {**ANA, "mrn": "X12345"},
                      content_type="application/json").status_code == 201
    before = _count(his_store)
    response = clerk.post("/api/v1/patients", {**ANA, "mrn": "x12345"},
                          content_type="application/json")
    assert response.status_code == 409
    assert "already registered" in response.json()["detail"]
    assert _count(his_store) == before


def test_it_refuses_an_unknown_department_and_writes_nothing(clerk: Client, his_store) -> None:
    pid = clerk.post("/api/v1/patients", ANA, content_type="application/json").json()["id"]
    before = _count(his_store)
    response = clerk.post(f"/api/v1/patients/{pid}/admissions",
                          {"department_id": "NOPE", "ward_id": "CARD-A", "reason": "x"},
                          content_type="application/json")
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "department_id"
    assert _count(his_store) == before


def test_it_answers_404_for_an_unknown_patient(clerk: Client) -> None:
    assert clerk.get("/api/v1/patients/does-not-exist").status_code == 404


def test_it_replays_an_idempotent_registration_instead_of_creating_twice(
        clerk: Client, his_store) -> None:
    first = clerk.post("/api/v1/patients", ANA, content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY="k-1")
    second = clerk.post("/api/v1/patients", ANA, content_type="application/json",
                        HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] == second.json()["id"]
    assert second["Idempotent-Replayed"] == "true"


def test_it_forbids_registration_without_the_clerk_role(api_client, reference_data) -> None:
    nurse = api_client("nurse")
    response = nurse.post("/api/v1/patients", ANA, content_type="application/json")
    assert response.status_code == 403


def test_it_refuses_a_stale_discharge_with_412(clerk: Client) -> None:
    pid = clerk.post("/api/v1/patients", ANA, content_type="application/json").json()["id"]
    adm = clerk.post(f"/api/v1/patients/{pid}/admissions",
                     {"department_id": "MED", "ward_id": "MED-1", "reason": "Pneumonia"},
                     content_type="application/json").json()
    stale = clerk.post(f"/api/v1/patients/{pid}/discharge", {"disposition": "home"},
                       content_type="application/json", HTTP_IF_MATCH='"not-the-etag"')
    assert stale.status_code == 412
    ok = clerk.post(f"/api/v1/patients/{pid}/discharge", {"disposition": "home"},
                    content_type="application/json", HTTP_IF_MATCH=adm["etag"])
    assert ok.status_code == 200
    assert ok.json()["status"] == "ended"


def test_it_forgets_an_idempotency_key_after_its_retention(clerk: Client, his_store) -> None:
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    from hisadmin.models import IdempotencyRecord

    first = clerk.post("/api/v1/patients", ANA, content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY="k-old")
    assert first.status_code == 201
    IdempotencyRecord.objects.filter(key="k-old").update(
        created=timezone.now() - timedelta(hours=25))
    # The same name and birth date again: a new request, so it must confirm it is not a
    # duplicate (a replay would not have asked).
    again = clerk.post("/api/v1/patients", {**ANA, "confirm_not_duplicate": True},
                       content_type="application/json", HTTP_IDEMPOTENCY_KEY="k-old")
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    assert again.json()["id"] != first.json()["id"]  # ran as a new request
    IdempotencyRecord.objects.all().update(created=timezone.now() - timedelta(hours=25))
    call_command("purge_idempotency_keys")
    assert not IdempotencyRecord.objects.exists()


def test_a_cached_token_sees_revocation_and_role_changes_at_once(
        api_client, reference_data) -> None:
    """The 5 s token cache is dropped in this process when a token, a user or a user's
    groups change, so the next request is judged on the new facts."""
    from django.contrib.auth.models import User

    from hisadmin.models import ApiToken

    clerk = api_client("clerk")
    assert clerk.post("/api/v1/patients", ANA, content_type="application/json").status_code == 201
    user = User.objects.get(username="api-clerk")
    user.groups.clear()
    assert clerk.post("/api/v1/patients", ANA, content_type="application/json").status_code == 403
    ApiToken.objects.filter(user=user).update(revoked=True)  # a queryset update: no signal
    token = ApiToken.objects.get(user=user)
    token.save()  # the admin saves the instance: the signal fires
    assert clerk.get("/api/v1/worklists/admitted?department=CARD").status_code == 401
