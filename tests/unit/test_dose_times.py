"""Dose times from standard local clock times: each shipped frequency, clock-change days in
Europe/London, a start with microseconds, the first dose now or next, the end of a course,
and slot ids that stay the same on every read."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from patients.domain import dose_times, mar
from patients.domain.reference import InvalidReferenceEntry, check_entry

LONDON = ZoneInfo("Europe/London")
FREQUENCIES = {e["code"]: e for e in json.loads(
    (Path(__file__).parents[2] / "patients/reference_data/Frequency.json").read_text())}


def order(code: str, start: datetime, *, first_dose: str = "next", **more: object) -> dict:
    frequency = FREQUENCIES[code]
    return {"orderId": "o1", "kind": "medication", "placedAt": start.isoformat(),
            "startAt": start.isoformat(), "asNeeded": bool(frequency.get("prn")),
            "schedule": dose_times.schedule_for(frequency, zone="Europe/London", start=start,
                                                first_dose=first_dose), **more}


def local_day(day: date) -> mar.Day:
    return mar.Day(day, LONDON)


def clock(times: list[datetime]) -> list[str]:
    return [t.astimezone(LONDON).strftime("%H:%M") for t in times]


def utc(times: list[datetime]) -> list[str]:
    return [t.strftime("%H:%M") for t in times]


EARLY = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("code", "expected"), [
    ("OD", ["08:00"]), ("BD", ["08:00", "20:00"]), ("TDS", ["08:00", "14:00", "20:00"]),
    ("QDS", ["08:00", "12:00", "16:00", "20:00"]),
    ("Q4H", ["02:00", "06:00", "10:00", "14:00", "18:00", "22:00"]),
    ("Q6H", ["00:00", "06:00", "12:00", "18:00"]), ("Q8H", ["06:00", "14:00", "22:00"]),
    ("Q12H", ["08:00", "20:00"]), ("Q24H", ["08:00"]), ("QAM", ["08:00"]),
    ("NOCTE", ["22:00"])])
def test_each_shipped_frequency_gives_its_standard_local_times(code, expected) -> None:
    day = local_day(date(2026, 7, 15))  # summer: local is UTC+1
    assert clock(mar.slot_times(order(code, EARLY), 0, day)) == expected


def test_every_shipped_frequency_passes_the_reference_rules() -> None:
    for entry in FREQUENCIES.values():
        check_entry("Frequency", entry, {})
    assert {"STAT", "ONCE", "PRN"} <= set(FREQUENCIES)


def test_tds_on_the_spring_forward_day_is_three_doses_at_the_right_instants() -> None:
    day = local_day(date(2026, 3, 29))  # 01:00 GMT becomes 02:00 BST
    times = mar.slot_times(order("TDS", EARLY), 8, day)
    assert utc(times) == ["07:00", "13:00", "19:00"] and clock(times) == [
        "08:00", "14:00", "20:00"]


def test_tds_on_the_fall_back_day_is_three_doses_at_the_right_instants() -> None:
    day = local_day(date(2026, 10, 25))  # 02:00 BST becomes 01:00 GMT
    times = mar.slot_times(order("TDS", EARLY), 8, day)
    assert utc(times) == ["08:00", "14:00", "20:00"] and clock(times) == [
        "08:00", "14:00", "20:00"]


def test_q4h_keeps_its_clock_times_across_both_clock_changes() -> None:
    spring = mar.slot_times(order("Q4H", EARLY), 4, local_day(date(2026, 3, 29)))
    autumn = mar.slot_times(order("Q4H", EARLY), 4, local_day(date(2026, 10, 25)))
    expected = ["02:00", "06:00", "10:00", "14:00", "18:00", "22:00"]
    assert clock(spring) == expected and clock(autumn) == expected
    # 02:00 BST is 01:00 UTC in spring; 02:00 GMT is 02:00 UTC in autumn
    assert utc(spring)[0] == "01:00" and utc(autumn)[0] == "02:00"


def test_no_slot_is_doubled_or_lost_in_the_hour_that_repeats_or_vanishes() -> None:
    hourly = {"times": [f"{h:02d}:30" for h in range(24)], "minIntervalHours": 0.5}
    base = {"orderId": "o1", "kind": "medication", "startAt": EARLY.isoformat(),
            "placedAt": EARLY.isoformat()}
    spring = mar.slot_times({**base, "schedule": dose_times.schedule_for(
        hourly, zone="Europe/London", start=EARLY)}, 1, local_day(date(2026, 3, 29)))
    autumn = mar.slot_times({**base, "schedule": dose_times.schedule_for(
        hourly, zone="Europe/London", start=EARLY)}, 1, local_day(date(2026, 10, 25)))
    assert len(spring) == len(set(spring)) == 23  # 01:30 does not exist that night
    assert len(autumn) == len(set(autumn)) == 24  # 01:30 happens twice; given once
    assert clock(autumn).count("01:30") == 1


def test_a_start_with_microseconds_gives_dose_times_to_the_minute() -> None:
    start = datetime(2026, 11, 25, 14, 12, 37, 123456, tzinfo=UTC)
    day = local_day(date(2026, 11, 25))
    times = mar.slot_times(order("TDS", start), 8, day)
    assert clock(times) == ["20:00"]  # the next standard time after 14:12
    now_first = mar.slot_times(order("TDS", start, first_dose="now"), 8, day)
    assert clock(now_first) == ["14:12", "20:00"]
    assert all(t.second == 0 and t.microsecond == 0 for t in now_first)
    assert mar.find_slot(order("TDS", start, first_dose="now"), 8, start) == now_first[0]


def test_the_first_dose_now_skips_a_standard_time_inside_the_minimum_interval() -> None:
    start = datetime(2026, 11, 25, 13, 0, tzinfo=UTC)  # TDS: at least 4 h apart
    times = mar.slot_times(order("TDS", start, first_dose="now"), 8,
                           local_day(date(2026, 11, 25)))
    assert clock(times) == ["13:00", "20:00"]


def test_stat_and_once_are_one_dose_time_at_the_start_and_prn_has_none() -> None:
    start = datetime(2026, 11, 25, 9, 41, 5, tzinfo=UTC)
    day = local_day(date(2026, 11, 25))
    assert clock(mar.slot_times(order("STAT", start), 0, day)) == ["09:41"]
    assert clock(mar.slot_times(order("ONCE", start), 0, day)) == ["09:41"]
    assert mar.slot_times(order("PRN", start), 0, day) == []


def test_no_dose_time_after_the_order_ended() -> None:
    ended = datetime(2026, 11, 25, 13, 0, tzinfo=UTC).isoformat()
    times = mar.slot_times(order("QDS", EARLY, endedAt=ended), 6,
                           local_day(date(2026, 11, 25)))
    assert clock(times) == ["08:00", "12:00"]


def test_slot_ids_are_stable_and_name_the_order_and_minute() -> None:
    o = order("TDS", EARLY)
    day = local_day(date(2026, 3, 29))
    first = mar.day_record(o, 8, day, EARLY)["slots"]
    again = mar.day_record(o, 8, day, EARLY + timedelta(days=40))["slots"]
    assert [s["slotId"] for s in first] == [s["slotId"] for s in again]
    assert first[0]["slotId"] == "o1.20260329T0700Z"
    assert dose_times.parse_slot_id(first[0]["slotId"]) == (
        "o1", datetime(2026, 3, 29, 7, 0, tzinfo=UTC))


def test_a_recorded_dose_time_closes_its_slot_whatever_its_seconds() -> None:
    o = order("TDS", EARLY)
    o["administrations"] = [{"status": "given", "administeredAt": "2026-03-29T07:05:00Z",
                             "scheduledFor": "2026-03-29T07:00:42.5+00:00"}]
    slots = mar.day_record(o, 8, local_day(date(2026, 3, 29)),
                           datetime(2026, 3, 29, 7, 10, tzinfo=UTC))["slots"]
    assert [s["status"] for s in slots] == ["given", "upcoming", "upcoming"]


def test_a_dose_without_a_slot_answers_the_one_due_and_only_that_one() -> None:
    o = order("QDS", EARLY)
    due = mar.due_slot(o, 6, datetime(2026, 11, 25, 8, 20, tzinfo=UTC))
    assert clock([due]) == ["08:00"]  # type: ignore[list-item]
    assert mar.due_slot(o, 6, datetime(2026, 11, 25, 10, 0, tzinfo=UTC)) is None
    # two dose times an hour apart: their windows overlap at 08:40 → the nurse says which
    close = {**o, "schedule": {**o["schedule"], "times": ["08:00", "09:00"]}}
    assert mar.due_slot(close, 6, datetime(2026, 11, 25, 8, 40, tzinfo=UTC)) is None


def test_the_first_open_dose_time_skips_those_recorded() -> None:
    o = order("BD", EARLY)
    first = mar.first_open_slot(o, 12, set())
    assert first == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    second = mar.first_open_slot(o, 12, {dose_times.slot_key(first)})
    assert second == datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize("entry", [
    {"times": ["8:00"]}, {"times": ["08:00", "08:00"]}, {"times": []},
    {"hours": 5, "anchor": "02:00"}, {"hours": 4, "anchor": "2am"},
    {"times": ["08:00"], "prn": True}, {"once": "yes"}, {"minIntervalHours": 0,
                                                          "times": ["08:00"]}])
def test_the_reference_rules_refuse_a_frequency_that_is_not_a_schedule(entry) -> None:
    with pytest.raises(InvalidReferenceEntry):
        check_entry("Frequency", {"code": "X", "name": "X", **entry}, {})
