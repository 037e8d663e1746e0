"""Observations in the API: a set recorded and scored as one batch with its event, listed
newest first, refused values named, scale 2 and escalation as events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cosmos_backend.store import Cond, Query
from hisadmin.core import keys

pytestmark = pytest.mark.django_db
J = "application/json"
FULL = {"respiration_rate": 22, "spo2": 94, "on_oxygen": False, "systolic_bp": 104,
        "diastolic_bp": 62, "pulse": 112, "consciousness": "A", "temperature": "38,4"}


def _events(store, pid: str) -> list[dict]:
    docs = store.query_all(keys.patient(pid), Query(where=(Cond("docType", "=", "Event"),)))
    return [d["docContents"] for d in docs]


def test_it_records_a_set_with_its_score_location_and_etag(team, admit, his_store) -> None:
    pid = admit("Vitals", bed="M104")
    taken = "2026-11-28T09:15:30.123456+01:00"
    r = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                           {**FULL, "taken_at": taken}, content_type=J,
                           HTTP_IDEMPOTENCY_KEY="obs-1")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["news2"] == {
        "score": 7, "risk": "high", "complete": True, "missing": [], "scale": 1,
        "parameter_scores": {"respiration_rate": 2, "spo2": 1, "air_or_oxygen": 0,
                             "systolic_bp": 1, "pulse": 2, "consciousness": 0,
                             "temperature": 1},
        "next_due_at": "2026-11-28T08:45:30.123456+00:00"}
    assert body["taken_at"] == "2026-11-28T08:15:30.123456+00:00"
    assert body["temperature"] == 38.4 and body["bed"] == "M104"
    assert r["Location"] == f"/api/v1/patients/{pid}/observations/{body['observation_id']}"
    assert r["ETag"]
    again = team["nurse"].get(r["Location"])
    assert again.status_code == 200 and again["ETag"] == r["ETag"]
    replay = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                                {**FULL, "taken_at": taken}, content_type=J,
                                HTTP_IDEMPOTENCY_KEY="obs-1")
    assert replay.status_code == 201 and replay.json() == body
    recorded = [e for e in _events(his_store, pid) if e["type"] == "ObservationsRecorded"]
    assert len(recorded) == 1  # the retry recorded nothing
    assert recorded[0]["data"]["news2"]["score"] == 7


def test_a_naive_time_is_the_hospitals(team, admit, settings) -> None:
    settings.HOSPITAL_TIME_ZONE = "Europe/Madrid"
    pid = admit("Naive")
    r = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                           {"pulse": 80, "taken_at": "2026-07-01T10:00:00"}, content_type=J)
    assert r.status_code == 201, r.content
    assert r.json()["taken_at"] == "2026-07-01T08:00:00+00:00"


def test_a_partial_set_is_recorded_incomplete_without_a_score(team, admit) -> None:
    pid = admit("Partial")
    r = team["doc"].post(f"/api/v1/patients/{pid}/observations",
                         {"pulse": 120, "temperature": 38.2}, content_type=J)
    assert r.status_code == 201, r.content
    news2 = r.json()["news2"]
    assert (news2["complete"], news2["score"], news2["risk"], news2["next_due_at"]) == (
        False, None, None, None)
    assert news2["parameter_scores"] == {"pulse": 2, "temperature": 1}


@pytest.mark.parametrize(("changes", "field"), [
    ({"spo2": 101}, "spo2"), ({"temperature": 3}, "temperature"),
    ({"systolic_bp": 80, "diastolic_bp": 95}, "systolic_bp"),
    ({"consciousness": "X"}, "consciousness"), ({"pulse": "fast"}, "pulse"),
])
def test_it_refuses_an_impossible_value_naming_the_field(team, admit, changes, field,
                                                         his_store) -> None:
    pid = admit("Impossible")
    before = len(_events(his_store, pid))
    r = team["nurse"].post(f"/api/v1/patients/{pid}/observations", {**FULL, **changes},
                           content_type=J)
    assert r.status_code == 422, r.content
    assert r["Content-Type"] == "application/problem+json"
    assert field in r.content.decode()
    assert len(_events(his_store, pid)) == before  # nothing written


def test_it_refuses_a_future_time_and_an_empty_set(team, admit) -> None:
    pid = admit("Future")
    later = (datetime.now(UTC) + timedelta(minutes=10)).isoformat()
    r = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                           {"pulse": 80, "taken_at": later}, content_type=J)
    assert r.status_code == 422 and "taken_at" in r.content.decode()
    empty = team["nurse"].post(f"/api/v1/patients/{pid}/observations", {}, content_type=J)
    assert empty.status_code == 422


def test_it_lists_sets_newest_taken_first_a_page_at_a_time(team, admit) -> None:
    pid = admit("Listed")
    for hour in (8, 12, 10):
        assert team["nurse"].post(f"/api/v1/patients/{pid}/observations", {
            "pulse": 70 + hour, "taken_at": f"2026-11-27T{hour:02d}:00:00+00:00"},
            content_type=J).status_code == 201
    first = team["nurse"].get(f"/api/v1/patients/{pid}/observations?limit=2").json()
    assert [o["pulse"] for o in first["items"]] == [82, 80]
    rest = team["nurse"].get(f"/api/v1/patients/{pid}/observations?limit=2"
                             f"&continuation={first['continuation']}").json()
    assert [o["pulse"] for o in rest["items"]] == [78]


def test_scale_2_is_a_clinicians_recorded_decision(team, admit, his_store) -> None:
    pid = admit("Hypercapnic")
    url = f"/api/v1/patients/{pid}/spo2-scale"
    assert team["nurse"].post(url, {"scale": 2, "reason": "COPD"},
                              content_type=J).status_code == 403
    decided = team["doc"].post(url, {"scale": 2, "reason": "Hypercapnic failure, target 88-92"},
                               content_type=J)
    assert decided.status_code == 200 and decided.json()["scale"] == 2
    assert team["doc"].post(url, {"scale": 2, "reason": "again"},
                            content_type=J).status_code == 409
    on_scale_2 = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                                    {**FULL, "spo2": 89}, content_type=J).json()["news2"]
    assert on_scale_2["scale"] == 2 and on_scale_2["parameter_scores"]["spo2"] == 0
    ended = team["doc"].post(url, {"scale": 1, "reason": "CO2 normal"}, content_type=J)
    assert ended.status_code == 200 and ended.json()["scale"] == 1
    on_scale_1 = team["nurse"].post(f"/api/v1/patients/{pid}/observations",
                                    {**FULL, "spo2": 89}, content_type=J).json()["news2"]
    assert on_scale_1["scale"] == 1 and on_scale_1["parameter_scores"]["spo2"] == 3
    kinds = [e["type"] for e in _events(his_store, pid)]
    assert "Spo2Scale2Decided" in kinds and "Spo2Scale2Ended" in kinds


def test_an_escalation_is_recorded_on_the_set_as_an_event(team, admit, his_store) -> None:
    pid = admit("Escalated")
    oid = team["nurse"].post(f"/api/v1/patients/{pid}/observations", FULL,
                             content_type=J).json()["observation_id"]
    r = team["nurse"].post(f"/api/v1/patients/{pid}/observations/{oid}/escalations",
                           {"told_whom": "Dr Patel, medical registrar",
                            "response": "critical-care", "detail": "Outreach attending"},
                           content_type=J)
    assert r.status_code == 201, r.content
    assert r.json()["escalations"][0]["told_whom"] == "Dr Patel, medical registrar"
    bad = team["nurse"].post(f"/api/v1/patients/{pid}/observations/{oid}/escalations",
                             {"told_whom": "x", "response": "shrug"}, content_type=J)
    assert bad.status_code == 422
    missing = team["nurse"].post(f"/api/v1/patients/{pid}/observations/nope/escalations",
                                 {"told_whom": "x", "response": "plan"}, content_type=J)
    assert missing.status_code == 404
    escalated = [e for e in _events(his_store, pid) if e["type"] == "ObservationsEscalated"]
    assert escalated[0]["data"]["observationId"] == oid


def test_a_clerk_may_not_record_observations(api_client, admit) -> None:
    pid = admit("Clerked")
    r = api_client("clerk").post(f"/api/v1/patients/{pid}/observations", FULL, content_type=J)
    assert r.status_code == 403
