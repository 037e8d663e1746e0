"""Read-your-writes: every command's answer carries X-Consistency-Token; a worklist read that
sends it waits until the worklists have applied it, else 503 with Retry-After; the pages keep
it in the session so the list a user lands on shows their change."""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client

from hisadmin.core import consistency

pytestmark = pytest.mark.django_db
J = "application/json"
HEADER = "X-Consistency-Token"


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consistency, "WAIT_SECONDS", 0.3)


def register(team: dict[str, Client], family: str = "Token") -> tuple[str, str]:
    r = team["clerk"].post("/api/v1/patients", {"given_name": "Tia", "family_name": family,
                                                "birth_date": "1980-01-01"}, content_type=J)
    assert r.status_code == 201
    return r.json()["id"], r[HEADER]


def test_every_command_answer_carries_a_token_naming_its_last_event(team) -> None:
    pid, token = register(team)
    assert consistency.decode(token) == {f"P_{pid}": 1}
    admitted = team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Obs"}, content_type=J)
    assert consistency.decode(admitted[HEADER]) == {f"P_{pid}": 2}
    read = team["clerk"].get(f"/api/v1/patients/{pid}")
    assert HEADER not in read  # reads commit nothing
    refused = team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Obs"}, content_type=J)
    assert refused.status_code == 409 and HEADER not in refused


def test_a_read_with_the_token_waits_for_the_projection(team, drain_worklists) -> None:
    pid, token = register(team)
    done = threading.Timer(0.3, drain_worklists)  # the projection catches up meanwhile
    done.start()
    started = time.monotonic()
    page = team["clerk"].get("/api/v1/worklists/patients", {"q": "Token"},
                             HTTP_X_CONSISTENCY_TOKEN=token)
    done.join()
    assert page.status_code == 200, page.content
    assert [r["patient_id"] for r in page.json()["items"]] == [pid]
    assert time.monotonic() - started >= 0.25


def test_a_read_the_projection_has_not_caught_up_with_is_a_503(team, quick) -> None:
    _, token = register(team)
    late = team["clerk"].get("/api/v1/worklists/patients", {"q": "Token"},
                             HTTP_X_CONSISTENCY_TOKEN=token)
    assert late.status_code == 503 and late["Retry-After"] == "1"
    assert late["Content-Type"].startswith("application/problem+json")


def test_a_token_not_issued_here_is_a_400(team) -> None:
    for bad in ("nonsense", "c1.%%%", "c1.eyJhIjoiYiJ9"):
        r = team["clerk"].get("/api/v1/worklists/patients", {"q": "To"},
                              HTTP_X_CONSISTENCY_TOKEN=bad)
        assert r.status_code == 400, bad
        assert r["Content-Type"].startswith("application/problem+json")


def test_a_page_command_makes_the_next_list_wait_for_it(make_user, reference_data,
                                                         drain_worklists) -> None:
    clerk = Client()
    clerk.force_login(make_user("desk", "clerk"))
    r = clerk.post("/admin/patients/register/", {
        "given_name": "Paige", "family_name": "Landing", "birth_date": "1971-07-07",
        "sex": "female", "confirm_not_duplicate": "on"})
    assert r.status_code == 302, r.content[:500]
    assert consistency.SESSION_KEY in clerk.session
    timer = threading.Timer(0.3, drain_worklists)
    timer.start()
    listed = clerk.get("/admin/worklists/patients/", {"q": "Landing"}).content.decode()
    timer.join()
    assert "LANDING, Paige" in listed
    assert consistency.SESSION_KEY not in clerk.session  # once only


def test_a_page_says_when_the_change_has_not_arrived(make_user, reference_data, quick) -> None:
    clerk = Client()
    clerk.force_login(make_user("desk", "clerk"))
    clerk.post("/admin/patients/register/", {
        "given_name": "Paige", "family_name": "Later", "birth_date": "1971-07-07",
        "sex": "female", "confirm_not_duplicate": "on"})
    listed = clerk.get("/admin/worklists/patients/", {"q": "Later"}).content.decode()
    assert "has not reached this list yet" in listed
