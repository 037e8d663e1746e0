"""Observations due and Patients at risk, from the events alone (pure projection)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from patients.domain import observations
from patients.domain.events import EventType
from tests.unit.worklist_events import T0, History
from worklists.projection.rows import AT_RISK, MY_PATIENTS, OBS_DUE, rows_for
from worklists.projection.rules import fold
from worklists.projection.state import PatientState

NORMAL = {"respiration_rate": 16, "spo2": 97, "on_oxygen": False, "systolic_bp": 120,
          "pulse": 70, "consciousness": "A", "temperature": 37.0}
MEDIUM = {**NORMAL, "respiration_rate": 22, "spo2": 94, "pulse": 115}  # 5
HIGH = {**MEDIUM, "respiration_rate": 25, "temperature": 38.5}  # 3 + 1 + 2 + 1 = 7


def _state(h: History) -> PatientState:
    state = PatientState("p1")
    for event in h.events:
        state = fold(state, event)
    return state


def _set(h: History, oid: str, values: dict, minutes: int) -> None:
    taken = datetime.fromisoformat(T0) + timedelta(minutes=minutes)
    h.add(EventType.OBSERVATIONS_RECORDED, {
        "observationId": oid, "takenAt": taken.isoformat(), "admissionId": h.admission,
        "news2": observations.news2(values, taken_at=taken).as_json(), "flags": [],
        **{observations.STORED[k]: v for k, v in values.items()}})


def _rows(h: History, view: str) -> list:
    return [r for r in rows_for(_state(h)).values() if r.view == view]


def _admitted() -> History:
    h = History()
    h.register()
    h._admit(random.Random(5))
    return h


def test_a_patient_without_a_set_is_due_from_admission_and_not_at_risk() -> None:
    h = _admitted()
    [due] = _rows(h, OBS_DUE)
    assert due.query["QueryNextDue"] == T0 and due.bucket == due.contents["wardId"]
    assert _rows(h, AT_RISK) == []


def test_a_medium_score_is_at_risk_not_escalated_until_someone_is_told() -> None:
    h = _admitted()
    _set(h, "s1", MEDIUM, 0)
    [risk] = _rows(h, AT_RISK)
    assert (risk.contents["score"], risk.contents["risk"], risk.contents["escalated"]) == (
        5, "medium", False)
    assert risk.bucket == risk.contents["departmentId"]
    [due] = _rows(h, OBS_DUE)
    assert due.query["QueryNextDue"] == "2026-01-05T09:00:00+00:00"  # hourly at medium
    h.add(EventType.OBSERVATIONS_ESCALATED, {"observationId": "s1", "toldWhom": "Dr A",
                                             "toldAt": T0, "response": "plan"})
    assert _rows(h, AT_RISK)[0].contents["escalated"] is True


def test_the_trend_is_the_change_since_the_previous_scored_set() -> None:
    h = _admitted()
    _set(h, "s1", MEDIUM, 0)
    _set(h, "s2", {"pulse": 140}, 10)  # partial: no score, changes nothing
    _set(h, "s3", HIGH, 20)
    [risk] = _rows(h, AT_RISK)
    assert (risk.contents["score"], risk.contents["previousScore"], risk.contents["trend"]) \
        == (7, 5, 2)
    assert risk.contents["escalated"] is False  # the new score is not escalated yet


def test_a_set_entered_late_does_not_replace_the_latest() -> None:
    h = _admitted()
    _set(h, "s1", HIGH, 60)
    _set(h, "s0", NORMAL, 0)
    [risk] = _rows(h, AT_RISK)
    assert risk.contents["observationId"] == "s1"


def test_a_low_score_leaves_the_list_and_a_single_three_is_on_it() -> None:
    h = _admitted()
    _set(h, "s1", MEDIUM, 0)
    _set(h, "s2", NORMAL, 30)
    assert _rows(h, AT_RISK) == []
    _set(h, "s3", {**NORMAL, "consciousness": "V"}, 60)
    [risk] = _rows(h, AT_RISK)
    assert risk.contents["risk"] == "low-medium" and risk.contents["singleThree"]


def test_an_earlier_stays_score_does_not_follow_the_patient() -> None:
    h = _admitted()
    _set(h, "s1", HIGH, 0)
    h._discharge(random.Random(1))
    assert _rows(h, AT_RISK) == [] and _rows(h, OBS_DUE) == []
    h.n += 1  # a new admission id
    h._admit(random.Random(2))
    assert _rows(h, AT_RISK) == []
    assert _rows(h, OBS_DUE)[0].contents["score"] is None


def test_my_patients_carries_the_beds_news2_badge() -> None:
    h = _admitted()
    assert _rows(h, MY_PATIENTS)[0].contents["news2"] is None
    _set(h, "s1", MEDIUM, 0)
    badge = _rows(h, MY_PATIENTS)[0].contents["news2"]
    assert badge == {"score": 5, "risk": "medium", "notEscalated": True,
                     "nextDueAt": "2026-01-05T09:00:00+00:00"}
