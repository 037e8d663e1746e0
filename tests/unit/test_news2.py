"""NEWS2 scoring against the published chart (RCP 2017): every band edge of every
parameter, the risk, the next set's due time, partial sets and the refused values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from patients.domain import observations as obs
from patients.domain.errors import InvalidInput

# A full set scoring 0 everywhere; each case changes one value.
NORMAL = {"respiration_rate": 16, "spo2": 97, "on_oxygen": False, "systolic_bp": 120,
          "pulse": 70, "consciousness": "A", "temperature": 37.0}
AT = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)

BAND_EDGES = [
    # respiration rate: ≤8 → 3; 9–11 → 1; 12–20 → 0; 21–24 → 2; ≥25 → 3
    ("respiration_rate", 0, 3), ("respiration_rate", 8, 3), ("respiration_rate", 9, 1),
    ("respiration_rate", 11, 1), ("respiration_rate", 12, 0), ("respiration_rate", 20, 0),
    ("respiration_rate", 21, 2), ("respiration_rate", 24, 2), ("respiration_rate", 25, 3),
    ("respiration_rate", 80, 3),
    # SpO2 scale 1: ≤91 → 3; 92–93 → 2; 94–95 → 1; ≥96 → 0
    ("spo2", 91, 3), ("spo2", 92, 2), ("spo2", 93, 2), ("spo2", 94, 1), ("spo2", 95, 1),
    ("spo2", 96, 0), ("spo2", 100, 0),
    # systolic: ≤90 → 3; 91–100 → 2; 101–110 → 1; 111–219 → 0; ≥220 → 3
    ("systolic_bp", 90, 3), ("systolic_bp", 91, 2), ("systolic_bp", 100, 2),
    ("systolic_bp", 101, 1), ("systolic_bp", 110, 1), ("systolic_bp", 111, 0),
    ("systolic_bp", 219, 0), ("systolic_bp", 220, 3),
    # pulse: ≤40 → 3; 41–50 → 1; 51–90 → 0; 91–110 → 1; 111–130 → 2; ≥131 → 3
    ("pulse", 40, 3), ("pulse", 41, 1), ("pulse", 50, 1), ("pulse", 51, 0), ("pulse", 90, 0),
    ("pulse", 91, 1), ("pulse", 110, 1), ("pulse", 111, 2), ("pulse", 130, 2),
    ("pulse", 131, 3),
    # temperature: ≤35.0 → 3; 35.1–36.0 → 1; 36.1–38.0 → 0; 38.1–39.0 → 1; ≥39.1 → 2
    ("temperature", 35.0, 3), ("temperature", 35.1, 1), ("temperature", 36.0, 1),
    ("temperature", 36.1, 0), ("temperature", 38.0, 0), ("temperature", 38.1, 1),
    ("temperature", 39.0, 1), ("temperature", 39.1, 2),
    # consciousness: A → 0; C, V, P, U → 3
    ("consciousness", "A", 0), ("consciousness", "C", 3), ("consciousness", "V", 3),
    ("consciousness", "P", 3), ("consciousness", "U", 3),
    # air 0, oxygen 2
    ("on_oxygen", False, 0),
]


@pytest.mark.parametrize(("name", "value", "points"), BAND_EDGES)
def test_it_scores_every_band_edge_on_scale_1(name, value, points):
    values, _ = obs.checked({**NORMAL, name: value})
    result = obs.news2(values)
    key = "air_or_oxygen" if name == "on_oxygen" else name
    assert result.parameter_scores[key] == points
    assert result.score == points


SCALE_2 = [
    # ≤83 → 3; 84–85 → 2; 86–87 → 1; 88–92 → 0; ≥93 on air → 0
    (83, False, 3), (84, False, 2), (85, False, 2), (86, False, 1), (87, False, 1),
    (88, False, 0), (92, False, 0), (93, False, 0), (100, False, 0),
    # on oxygen: 88–92 → 0; 93–94 → 1; 95–96 → 2; ≥97 → 3
    (83, True, 3), (88, True, 0), (92, True, 0), (93, True, 1), (94, True, 1), (95, True, 2),
    (96, True, 2), (97, True, 3), (100, True, 3),
]


@pytest.mark.parametrize(("spo2", "on_oxygen", "points"), SCALE_2)
def test_it_scores_every_band_edge_on_scale_2(spo2, on_oxygen, points):
    device = {"oxygen_device": "nasal", "oxygen_flow_l_min": "2"} if on_oxygen else {}
    values, _ = obs.checked({**NORMAL, "spo2": spo2, "on_oxygen": on_oxygen, **device})
    result = obs.news2(values, scale=2)
    assert result.parameter_scores["spo2"] == points
    assert result.score == points + (2 if on_oxygen else 0)
    assert result.scale == 2


def test_it_scores_oxygen_as_two():
    values, _ = obs.checked({**NORMAL, "on_oxygen": True, "oxygen_device": "venturi",
                             "oxygen_flow_l_min": "4,0"})
    result = obs.news2(values)
    assert result.parameter_scores["air_or_oxygen"] == 2
    assert values["oxygen_flow_l_min"] == 4.0


@pytest.mark.parametrize(("changes", "score", "risk", "due_after"), [
    ({}, 0, obs.Risk.LOW, timedelta(hours=12)),
    ({"pulse": 95}, 1, obs.Risk.LOW, timedelta(hours=4)),
    ({"pulse": 95, "respiration_rate": 22, "temperature": 38.5}, 4, obs.Risk.LOW,
     timedelta(hours=4)),
    ({"consciousness": "C"}, 3, obs.Risk.LOW_MEDIUM, timedelta(hours=1)),
    ({"consciousness": "V", "pulse": 95}, 4, obs.Risk.LOW_MEDIUM, timedelta(hours=1)),
    ({"respiration_rate": 22, "spo2": 94, "pulse": 115}, 5, obs.Risk.MEDIUM,
     timedelta(hours=1)),
    ({"respiration_rate": 22, "spo2": 93, "pulse": 115}, 6, obs.Risk.MEDIUM,
     timedelta(hours=1)),
    ({"respiration_rate": 25, "spo2": 93, "pulse": 115}, 7, obs.Risk.HIGH,
     timedelta(minutes=30)),
    ({"respiration_rate": 25, "spo2": 91, "pulse": 131, "systolic_bp": 88,
      "consciousness": "U", "temperature": 39.5, "on_oxygen": True}, 19, obs.Risk.HIGH,
     timedelta(minutes=30)),
])
def test_it_gives_the_risk_and_the_next_sets_due_time(changes, score, risk, due_after):
    values, _ = obs.checked({**NORMAL, **changes})
    result = obs.news2(values, taken_at=AT)
    assert (result.score, result.risk, result.complete) == (score, risk, True)
    assert result.next_due_at == AT + due_after


def test_it_records_a_partial_set_as_incomplete_without_a_score():
    values, _ = obs.checked({"pulse": 120, "temperature": "38,2"})
    result = obs.news2(values, taken_at=AT)
    assert result.complete is False
    assert (result.score, result.risk, result.next_due_at) == (None, None, None)
    assert result.parameter_scores == {"pulse": 2, "temperature": 1}
    assert "respiration_rate" in result.missing and "air_or_oxygen" in result.missing


def test_a_missing_air_or_oxygen_leaves_a_set_incomplete():
    values, _ = obs.checked({**NORMAL, "on_oxygen": None})
    assert obs.news2(values).missing == ("air_or_oxygen",)


@pytest.mark.parametrize(("changes", "field"), [
    ({"spo2": 101}, "spo2"), ({"spo2": 19}, "spo2"), ({"temperature": 3}, "temperature"),
    ({"temperature": "45,1"}, "temperature"), ({"respiration_rate": -1}, "respiration_rate"),
    ({"respiration_rate": 81}, "respiration_rate"), ({"pulse": 301}, "pulse"),
    ({"pulse": 19}, "pulse"), ({"systolic_bp": 301}, "systolic_bp"),
    ({"systolic_bp": 80, "diastolic_bp": 90}, "systolic_bp"),
    ({"systolic_bp": 90, "diastolic_bp": 90}, "systolic_bp"),
    ({"diastolic_bp": 5}, "diastolic_bp"), ({"pain_score": 11}, "pain_score"),
    ({"pulse": 72.5}, "pulse"), ({"pulse": "fast"}, "pulse"), ({"pulse": "NaN"}, "pulse"),
    ({"pulse": True}, "pulse"), ({"consciousness": "X"}, "consciousness"),
    ({"oxygen_flow_l_min": 71, "on_oxygen": True}, "oxygen_flow_l_min"),
    ({"oxygen_flow_l_min": 2}, "on_oxygen"), ({"oxygen_device": "tent", "on_oxygen": True},
                                              "oxygen_device"),
    ({"comment": "x" * 501}, "comment"),
])
def test_it_refuses_an_impossible_value_naming_the_field(changes, field):
    with pytest.raises(InvalidInput) as caught:
        obs.checked({**NORMAL, **changes})
    assert caught.value.field == field


def test_it_refuses_an_empty_set():
    with pytest.raises(InvalidInput):
        obs.checked({"comment": "  "})


@pytest.mark.parametrize(("name", "value"), [
    ("pulse", 190), ("pulse", 30), ("respiration_rate", 45), ("respiration_rate", 4),
    ("spo2", 70), ("systolic_bp", 65), ("systolic_bp", 260), ("temperature", 30.5),
    ("temperature", 41.5),
])
def test_it_accepts_and_flags_an_extreme_but_possible_value(name, value):
    values, flags = obs.checked({**NORMAL, name: value})
    assert values[name] == value
    assert [f["field"] for f in flags] == [name]


def test_a_normal_set_has_no_flags():
    assert obs.checked(NORMAL)[1] == []


def test_temperature_is_kept_to_one_decimal_place():
    values, _ = obs.checked({"temperature": "36.05"})
    assert values["temperature"] == 36.1
    assert obs.parameter_scores(values)["temperature"] == 0
