"""A ward's nurse assignments per shift: GET/PUT with If-Match, roles, problems, the event."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from hisadmin.core import keys
from patients.persistence.beds import ward_pk

pytestmark = pytest.mark.django_db
J = "application/json"
URL = "/api/v1/wards/MED-1/assignments?shift=2026-11-25-day"


@pytest.fixture
def charge(api_client, reference_data) -> Client:
    return api_client("charge_nurse", "nurse")


def _nurse_id(username: str = "api-nurse") -> str:
    return str(User.objects.get(username=username).pk)


def test_it_assigns_nurses_to_beds_and_records_who_did(team, charge, his_store) -> None:
    first = charge.get(URL)
    assert first.status_code == 200 and first["ETag"] == "new"
    assert first.json()["assignments"] == [] and first.json()["shift"] == "2026-11-25-day"
    r = charge.put(URL, {"assignments": [{"bed": "M101", "nurse": "api-nurse"}]},
                   content_type=J, HTTP_IF_MATCH=first["ETag"])
    assert r.status_code == 200, r.content
    assert r.json()["assignments"] == [{"bed": "M101", "nurse_id": _nurse_id(),
                                        "nurse_name": "api-nurse"}]
    again = team["nurse"].get(URL)
    assert again["ETag"] == r["ETag"] and again.json()["assignments"][0]["bed"] == "M101"
    events = [d for d in his_store.query_all(ward_pk("MED-1"), _events())]
    assert events[-1]["docContents"]["type"] == "NursesAssigned"
    assert events[-1]["docContents"]["actor"]["username"] == "api-charge_nurse-nurse"


def _events():
    from cosmos_backend.store import Cond, Query
    return Query(where=(Cond("docType", "=", "Event"),))


def test_it_needs_if_match_and_refuses_a_stale_one(charge) -> None:
    body = {"assignments": [{"bed": "M101", "nurse": "api-charge_nurse-nurse"}]}
    assert charge.put(URL, body, content_type=J).status_code == 428
    ok = charge.put(URL, body, content_type=J, HTTP_IF_MATCH="new")
    assert ok.status_code == 200
    assert charge.put(URL, body, content_type=J, HTTP_IF_MATCH="new").status_code == 412


def test_it_lets_only_the_nurse_in_charge_assign(team) -> None:
    r = team["nurse"].put(URL, {"assignments": []}, content_type=J, HTTP_IF_MATCH="new")
    assert r.status_code == 403


def test_it_answers_bad_input_with_problems(charge) -> None:
    assert charge.get("/api/v1/wards/NOPE/assignments").status_code == 404
    assert charge.get("/api/v1/wards/MED-1/assignments?shift=tuesday").status_code == 422
    bad_bed = {"assignments": [{"bed": "X9", "nurse": "api-charge_nurse-nurse"}]}
    assert charge.put(URL, bad_bed, content_type=J, HTTP_IF_MATCH="new").status_code == 422
    not_nurse = {"assignments": [{"bed": "M101", "nurse": "nobody"}]}
    assert charge.put(URL, not_nurse, content_type=J, HTTP_IF_MATCH="new").status_code == 422
    extra = {"assignments": [], "other": 1}
    assert charge.put(URL, extra, content_type=J, HTTP_IF_MATCH="new").status_code == 422


def test_it_answers_the_shift_on_now_without_one(charge) -> None:
    r = charge.get("/api/v1/wards/MED-1/assignments")
    assert r.status_code == 200 and r.json()["shift"].endswith(("-day", "-night"))
    assert keys.PATIENT  # the patients' streams are untouched by assignments
