"""The MAR through the API: recording administrations (given, not given, 422s, the PRN 409
and its override, 412, 404) and reading the day (slots, PRN doses, a malformed date, roles)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
AMOX = {"kind": "medication", "medication_code": "AMOX", "dose": "1", "unit": "g",
        "route": "PO", "frequency": "Q8H", "first_dose": "now"}  # a dose time at the start
PARA_PRN = {"kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
            "route": "PO", "frequency": "Q6H", "as_needed": True}



@pytest.fixture
def admitted(admit: Callable[..., str]) -> str:
    return admit("Rex", given="Mia", birth_date="1955-02-02", bed="M102",
                 reason="Cellulitis")


def ready(team: dict[str, Client], pid: str, order: dict) -> str:
    placed = team["doc"].post(f"/api/v1/patients/{pid}/orders", order, content_type=J)
    assert placed.status_code == 201, placed.content
    oid = placed.json()["order_id"]
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{oid}/ready", {},
                              content_type=J).status_code == 200
    return f"/api/v1/patients/{pid}/orders/{oid}"


def midnight() -> datetime:
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)


def test_a_nurse_records_a_dose_at_its_time_and_the_mar_shows_it(
        team: dict[str, Client], admitted: str, request: pytest.FixtureRequest) -> None:
    start = midnight()
    if datetime.now(UTC) < start + timedelta(hours=1):  # just after midnight (run BD): the
        clock = time_machine.travel(start + timedelta(hours=1), tick=True)  # 00:10 dose is
        clock.start()                                   # later, refused as in the future
        request.addfinalizer(clock.stop)
    base = ready(team, admitted, {**AMOX, "start_at": start.isoformat()})
    r = team["nurse"].post(f"{base}/administrations", {
        "status": "given", "dose": "1000", "unit": "mg",
        "administered_at": (start + timedelta(minutes=10)).isoformat(),
        "scheduled_for": start.isoformat()}, content_type=J)
    assert r.status_code == 201, r.content
    [entry] = r.json()["administrations"]
    assert entry["status"] == "given" and entry["scheduled_for"].startswith(
        start.strftime("%Y-%m-%dT00:00:00"))
    assert entry["administered_at"].endswith("00:10:00+00:00") and r.headers["ETag"]
    day = team["clerk"].get(f"/api/v1/patients/{admitted}/mar").json()
    assert day["date"] == start.date().isoformat()
    [row] = day["orders"]
    assert row["order_id"] == base.rsplit("/", 1)[1] and row["frequency_hours"] == 8
    assert [s["scheduled_for"][11:16] for s in row["slots"]] == [
        "00:00", "06:00", "14:00", "22:00"]  # then Q8H's standard times
    first = row["slots"][0]
    assert first["status"] == "given" and first["administration"]["dose"] == "1000"
    assert first["administration"]["unit"] == "mg" and first["administration"]["by"] == (
        "api-nurse")
    assert {s["status"] for s in row["slots"][1:]} <= {"upcoming", "due", "late"}


def test_the_default_is_a_dose_given_now(team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, AMOX)
    r = team["nurse"].post(f"{base}/administrations", {"dose": "1000", "unit": "mg"},
                           content_type=J)
    assert r.status_code == 201 and r.json()["administrations"][0]["status"] == "given"


@pytest.mark.parametrize(("body", "field"), [
    ({"dose": "2", "unit": "g"}, "dose"),
    ({"dose": "5", "unit": "ml"}, "unit"),
    ({"dose": "1", "unit": "g", "administered_at": "2999-01-01T00:00:00Z"}, "administered_at"),
    ({"status": "not_given"}, "reason"),
    ({"status": "not_given", "reason": "other"}, "reason_detail"),
])
def test_broken_rules_are_422_problems(team: dict[str, Client], admitted: str, body: dict,
                                       field: str) -> None:
    base = ready(team, admitted, AMOX)
    r = team["nurse"].post(f"{base}/administrations", body, content_type=J)
    assert r.status_code == 422, r.content
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert field in r.content.decode()


def test_a_reason_outside_the_list_is_422(team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, AMOX)
    r = team["nurse"].post(f"{base}/administrations", {"status": "not_given",
                                                       "reason": "bored"}, content_type=J)
    assert r.status_code == 422


def test_reasons_are_read_with_underscores_and_other_takes_the_note(
        team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, AMOX)
    absent = team["nurse"].post(f"{base}/administrations", {
        "status": "not_given", "reason": "patient_absent"}, content_type=J)
    assert absent.status_code == 201, absent.content
    assert absent.json()["administrations"][0]["reason"] == "patient-absent"
    # each record closes one dose time: the next one is another order's
    base = ready(team, admitted, {**PARA_PRN, "as_needed": False, "first_dose": "now"})
    other = team["nurse"].post(f"{base}/administrations", {
        "status": "not_given", "reason": "other", "note": "In theatre"}, content_type=J)
    assert other.status_code == 201, other.content
    assert other.json()["administrations"][-1]["reason_detail"] == "In theatre"


def test_not_given_with_a_reason(team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, AMOX)
    r = team["nurse"].post(f"{base}/administrations", {
        "status": "not_given", "reason": "other", "reason_detail": "Vomiting"},
        content_type=J)
    assert r.status_code == 201, r.content
    entry = r.json()["administrations"][0]
    assert entry["status"] == "not_given" and entry["reason_detail"] == "Vomiting"
    assert entry["dose"] is None


def test_a_prn_dose_too_soon_is_409_dose_interval_then_overridden(
        team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, PARA_PRN)
    assert team["nurse"].post(f"{base}/administrations", {"dose": "1000", "unit": "mg"},
                              content_type=J).status_code == 201
    refused = team["nurse"].post(f"{base}/administrations", {"dose": "1", "unit": "g"},
                                 content_type=J)
    assert refused.status_code == 409
    problem = refused.json()
    assert problem["type"].endswith("/dose-interval")
    assert [c["type"] for c in problem["conflicts"]] == ["dose-interval"]
    given = team["nurse"].post(f"{base}/administrations", {
        "dose": "1", "unit": "g", "overrides": {"dose-interval": "Severe pain, Dr Who agreed"}},
        content_type=J)
    assert given.status_code == 201, given.content
    override = given.json()["administrations"][-1]["override"]
    assert override["check"] == "dose-interval" and override["reason"].startswith("Severe")
    # the old key still answers the check, under its new name
    old_key = team["nurse"].post(f"{base}/administrations", {
        "dose": "1", "unit": "g", "overrides": {"prn-interval": "Breakthrough pain, Dr Who agreed"}},
        content_type=J)
    assert old_key.status_code == 201, old_key.content
    assert [o["check"] for o in old_key.json()["administrations"][-1]["overrides"]] == [
        "dose-interval"]
    day = team["nurse"].get(f"/api/v1/patients/{admitted}/mar").json()
    [row] = day["orders"]
    assert row["as_needed"] and row["slots"] == [] and len(row["administrations"]) == 3
    assert row["prn_min_interval_hours"] == 4


def test_a_stale_if_match_is_412(team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, AMOX)
    r = team["nurse"].post(f"{base}/administrations", {"dose": "1", "unit": "g"},
                           content_type=J, headers={"If-Match": '"stale"'})
    assert r.status_code == 412


def test_unknown_patient_or_order_is_404(team: dict[str, Client], admitted: str) -> None:
    r = team["nurse"].post(f"/api/v1/patients/{admitted}/orders/nope/administrations",
                           {"dose": "1", "unit": "g"}, content_type=J)
    assert r.status_code == 404
    assert team["nurse"].get("/api/v1/patients/nobody/mar").status_code == 404


@pytest.mark.parametrize("value", ["2026-13-01", "yesterday", "20260301", "2026-3-1",
                                   "0001-01-01", "9999-12-31", "1899-12-31", "2101-01-01"])
def test_a_malformed_or_far_date_is_a_400_problem(team: dict[str, Client], admitted: str,
                                                  value: str) -> None:
    r = team["nurse"].get(f"/api/v1/patients/{admitted}/mar", {"date": value})
    assert r.status_code == 400
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert r.json()["type"] == "/api/v1/problems/bad-day"


def test_another_day(team: dict[str, Client], admitted: str) -> None:
    ready(team, admitted, AMOX)
    r = team["doc"].get(f"/api/v1/patients/{admitted}/mar", {"date": "2001-01-01"})
    assert r.status_code == 200 and r.json() == {
        "patient_id": admitted, "date": "2001-01-01", "now": r.json()["now"], "orders": []}


def test_only_nurses_record_and_everyone_on_the_record_reads(
        team: dict[str, Client], admitted: str, api_client) -> None:
    base = ready(team, admitted, AMOX)
    for role in ("clerk", "doc"):
        assert team[role].post(f"{base}/administrations", {"dose": "1", "unit": "g"},
                               content_type=J).status_code == 403
        assert team[role].get(f"/api/v1/patients/{admitted}/mar").status_code == 200
    outsider = api_client()
    assert outsider.get(f"/api/v1/patients/{admitted}/mar").status_code == 403
    assert Client().get(f"/api/v1/patients/{admitted}/mar").status_code == 401


def test_the_openapi_documents_the_answers(team: dict[str, Client]) -> None:
    spec = team["clerk"].get("/api/v1/openapi.json").json()
    post = spec["paths"]["/api/v1/patients/{patient_id}/orders/{order_id}/administrations"][
        "post"]
    assert {"201", "404", "409", "412", "422"} <= set(post["responses"])
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert "mar" in str(spec["paths"].keys())
    assert body


def test_a_dose_names_its_slot_by_id_or_by_a_time_with_microseconds_and_only_once(
        team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, AMOX)
    day = team["nurse"].get(f"/api/v1/patients/{admitted}/mar").json()
    first, *rest = day["orders"][0]["slots"]
    assert first["slot_id"].startswith(base.rsplit("/", 1)[1] + ".")
    by_id = team["nurse"].post(f"{base}/administrations", {
        "status": "not_given", "reason": "held", "slot_id": first["slot_id"]}, content_type=J)
    assert by_id.status_code == 201, by_id.content
    assert by_id.json()["administrations"][0]["slot_id"] == first["slot_id"]
    again = team["nurse"].post(f"{base}/administrations", {
        "status": "not_given", "reason": "held",
        "scheduled_for": first["scheduled_for"].replace("+00:00", ".123456+00:00")},
        content_type=J)
    assert again.status_code == 409 and "conflicts" in again.json(), again.content
    closed = team["nurse"].get(f"/api/v1/patients/{admitted}/mar").json()
    assert closed["orders"][0]["slots"][0]["status"] == "not_given"
    if rest:  # a later dose time of today, named by its time to the microsecond
        later = team["nurse"].post(f"{base}/administrations", {
            "status": "not_given", "reason": "refused",
            "scheduled_for": rest[0]["scheduled_for"].replace("+00:00", ".654321+00:00"),
            # it may be hours ahead: a dose not given before its time needs its own reason
            "overrides": {"early-not-given": "Patient going home before this dose time"}},
            content_type=J)
        assert later.status_code == 201, later.content
        assert later.json()["administrations"][-1]["slot_id"] == rest[0]["slot_id"]


def test_a_dose_with_no_slot_due_is_422_naming_slot_id_with_the_candidates(
        team: dict[str, Client], admitted: str) -> None:
    base = ready(team, admitted, {**AMOX, "first_dose": "next"})
    day = team["nurse"].get(f"/api/v1/patients/{admitted}/mar").json()
    slots = day["orders"][0]["slots"]
    r = team["nurse"].post(f"{base}/administrations", {
        "status": "not_given", "reason": "held"}, content_type=J)
    if any(s["status"] == "due" for s in slots):
        assert r.status_code == 201, r.content  # the one due is answered
        return
    assert r.status_code == 422, r.content
    problem = r.json()
    assert problem["type"].endswith("/slot-required")
    assert problem["errors"][0]["field"] == "slot_id"
    today = [s["slot_id"] for s in slots if s["status"] in ("upcoming", "due", "late")]
    if today:
        assert [c["slot_id"] for c in problem["candidates"]] == today
    else:  # late in the day, the first dose is tomorrow's: that one is offered, to give early
        (first,) = problem["candidates"]
        assert first["slot_id"].startswith(base.rsplit("/", 1)[1] + ".")
        assert first["status"] == "upcoming" and "the first is due" in problem["detail"]
