"""The wards API: wards with counts, a ward's beds, marking a bed clean (problems, roles)."""

from __future__ import annotations

import pytest
from django.test import Client

from hisadmin.core import keys
from patients.tasks import follow_up

pytestmark = pytest.mark.django_db
J = "application/json"
PROBLEM = "application/problem+json"


def _beds(client: Client, ward: str = "MED-1") -> dict[str, dict]:
    r = client.get(f"/api/v1/wards/{ward}/beds")
    assert r.status_code == 200, r.content
    return {b["code"]: b for b in r.json()}


def _leave(team: dict[str, Client], his_store, pid: str) -> None:
    """Discharge, then run the follow-up the relay would send (the bed goes to cleaning)."""
    assert (
        team["clerk"]
        .post(f"/api/v1/patients/{pid}/discharge", {"disposition": "home"}, content_type=J)
        .status_code
        == 200
    )
    seq = his_store.read(keys.patient(pid), "stream")["docContents"]["seq"]
    follow_up(keys.patient(pid), seq)


def test_it_lists_wards_with_their_counts(team, admit) -> None:
    admit("Counted", bed="M101")
    r = team["nurse"].get("/api/v1/wards")
    assert r.status_code == 200
    wards = {w["code"]: w for w in r.json()}
    assert set(wards) >= {"MED-1", "MED-2", "CARD-A", "SURG-1"}
    med = wards["MED-1"]
    assert (med["name"], med["department"]) == ("Medical Ward 1", "MED")
    assert (med["beds"], med["occupied"], med["free"], med["cleaning"]) == (10, 1, 9, 0)
    only = team["clerk"].get("/api/v1/wards?department=CARD").json()
    assert {w["code"] for w in only} == {"CARD-A", "CARD-CCU"}


def test_it_lists_a_wards_beds_with_the_occupant(team, admit) -> None:
    pid = admit("Occupant", bed="M103", birth_date="1950-01-01", allergies_asked=False)
    beds = _beds(team["clerk"])
    assert list(beds)[:3] == ["M101", "M102", "M103"]  # the ward's order
    bed = beds["M103"]
    assert bed["state"] == "occupied" and bed["patient_id"] == pid
    assert bed["patient"]["id"] == pid and bed["patient"]["name"] == "OCCUPANT, Ann"
    assert bed["patient"]["length_of_stay"] == 0 and bed["patient"]["age"] >= 75
    assert bed["patient"]["allergies"] == "unknown"
    assert beds["M101"] == {
        "code": "M101",
        "state": "free",
        "since": None,
        "patient_id": None,
        "patient": None,
        "etag": None,
    }
    assert bed["etag"]  # a held bed's version: If-Match for marking it clean


def test_it_answers_an_unknown_ward_with_a_404_problem(team) -> None:
    for url in ("/api/v1/wards/NOPE/beds", "/api/v1/wards/NOPE/beds/M101/clean"):
        r = (team["nurse"].get if url.endswith("beds") else team["nurse"].post)(url)
        assert r.status_code == 404 and r["Content-Type"].startswith(PROBLEM)
        assert r.json()["code"] == "UnknownWard"
    r = team["nurse"].post("/api/v1/wards/MED-1/beds/Z999/clean")
    assert r.status_code == 404 and r.json()["code"] == "UnknownBed"


def test_it_cleans_a_bed_after_discharge_and_refuses_one_not_being_cleaned(
    team, admit, his_store
) -> None:
    pid = admit("Cleaned", bed="M104")
    r = team["nurse"].post("/api/v1/wards/MED-1/beds/M104/clean")
    assert r.status_code == 409 and r["Content-Type"].startswith(PROBLEM)
    assert r.json()["code"] == "BedNotBeingCleaned"
    _leave(team, his_store, pid)
    assert _beds(team["nurse"])["M104"]["state"] == "cleaning"
    assert _beds(team["nurse"])["M104"]["patient"] is None
    taken = team["clerk"].post(
        f"/api/v1/patients/{admit('Next')}/transfer",
        {"ward_id": "MED-1", "bed": "M104"},
        content_type=J,
    )
    assert taken.status_code == 409 and taken.json()["code"] == "BedBeingCleaned"
    r = team["nurse"].post("/api/v1/wards/MED-1/beds/M104/clean")
    assert r.status_code == 200 and r.json()["state"] == "free"
    assert _beds(team["nurse"])["M104"]["state"] == "free"
    assert team["nurse"].post("/api/v1/wards/MED-1/beds/M104/clean").status_code == 409


@pytest.mark.parametrize(
    "role,allowed",
    [("clerk", True), ("nurse", True), ("clinician", False), ("admin", False), ("", False)],
)
def test_it_lets_only_a_nurse_or_a_clerk_mark_a_bed_clean(
    api_client, team, admit, his_store, role: str, allowed: bool
) -> None:
    _leave(team, his_store, admit("Roles", bed="M105"))
    client = api_client(*([role] if role else []))
    r = client.post("/api/v1/wards/MED-1/beds/M105/clean")
    assert r.status_code == (200 if allowed else 403), r.content
    state = _beds(team["nurse"])["M105"]["state"]
    assert state == ("free" if allowed else "cleaning")
    reads = client.get("/api/v1/wards").status_code
    assert reads == (200 if role in ("clerk", "nurse", "clinician") else 403)


def test_it_never_answers_bad_codes_with_a_server_error(team) -> None:
    for url in (
        "/api/v1/wards/%20/beds",
        "/api/v1/wards/MED-1/beds/%3F%23/clean",
        "/api/v1/wards/" + "W" * 300 + "/beds",
        "/api/v1/wards/MED-1/beds/" + "B" * 300 + "/clean",
    ):
        r = (team["nurse"].get if url.endswith("beds") else team["nurse"].post)(url)
        assert 400 <= r.status_code < 500, (url, r.status_code)
