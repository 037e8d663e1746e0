"""The MAR's pure rules: dose times from start and frequency, slot status at its boundaries,
the PRN interval."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest

from patients.domain import mar

DAY = mar.Day(date(2026, 3, 10))


def at(hh: int, mm: int = 0, *, day: int = 10) -> datetime:
    return datetime(2026, 3, day, hh, mm, tzinfo=UTC)


def order(**more: Any) -> dict[str, Any]:
    return {"kind": "medication", "status": "ready", "placedAt": "2026-03-09T21:30:00+00:00",
            "startAt": "2026-03-10T06:00:00+00:00", "endAt": None, "asNeeded": False,
            "administrations": [], **more}


def test_dose_times_run_from_the_start_every_frequency_hours() -> None:
    assert mar.slot_times(order(), 8, DAY) == [at(6), at(14), at(22)]


def test_a_course_started_earlier_keeps_its_rhythm_on_later_days() -> None:
    started = order(startAt="2026-03-08T09:00:00+00:00")
    assert mar.slot_times(started, 6, DAY) == [at(3), at(9), at(15), at(21)]


def test_without_start_the_order_starts_when_placed() -> None:
    assert mar.slot_times(order(startAt=None), 12, DAY) == [at(9, 30), at(21, 30)]


def test_the_end_stops_the_times() -> None:
    assert mar.slot_times(order(endAt="2026-03-10T14:00:00+00:00"), 4, DAY) == [
        at(6), at(10)]


def test_once_is_one_time_on_its_day_only() -> None:
    assert mar.slot_times(order(), 0, DAY) == [at(6)]
    assert mar.slot_times(order(), 0, mar.Day(date(2026, 3, 11))) == []


def test_prn_orders_have_no_times() -> None:
    assert mar.slot_times(order(asNeeded=True), 4, DAY) == []


def test_days_follow_the_time_zone() -> None:
    plus_two = timezone(timedelta(hours=2))
    local = mar.Day(date(2026, 3, 10), plus_two)
    # 06:00 UTC is 08:00 local; 22:00 UTC is already the next local day
    assert mar.slot_times(order(), 8, local) == [at(6), at(14)]
    times = mar.slot_times(order(startAt="2026-03-10T08:00:00"), 8, local)
    assert [t.astimezone(plus_two).hour for t in times] == [8, 16]


def test_is_slot_names_only_dose_times() -> None:
    assert mar.is_slot(order(), 8, at(14))
    assert not mar.is_slot(order(), 8, at(15))


@pytest.mark.parametrize(("now", "status"), [
    (at(13, 29), "upcoming"),
    (at(13, 30), "due"),
    (at(14), "due"),
    (at(15), "due"),
    (at(15, 1), "late"),
    (at(23, 59), "late"),
    (at(0, day=11), "missed"),
])
def test_slot_status_at_the_boundaries(now: datetime, status: str) -> None:
    assert mar.slot_status(at(14), None, now, DAY.end) == status


def test_a_recorded_slot_has_its_recorded_status() -> None:
    assert mar.slot_status(at(14), {"status": "not_given"}, at(23), DAY.end) == "not_given"
    assert mar.slot_status(at(14), {"status": "given"}, at(1, day=12), DAY.end) == "given"
    assert mar.slot_status(at(14), {}, at(1), DAY.end) == "given"  # older entries


def test_day_record_ties_administrations_to_their_slots() -> None:
    given = {"administrationId": "a1", "status": "given", "at": "2026-03-10T06:10:00+00:00",
             "administeredAt": "2026-03-10T06:05:00+00:00",
             "scheduledFor": "2026-03-10T06:00:00+00:00"}
    row = mar.day_record(order(administrations=[given]), 8, DAY, at(16))
    assert [(s["scheduledFor"][11:16], s["status"]) for s in row["slots"]] == [
        ("06:00", "given"), ("14:00", "late"), ("22:00", "upcoming")]
    assert row["slots"][0]["administration"] == given
    assert row["administrations"] == [given]


def test_active_on_follows_the_course() -> None:
    assert mar.active_on(order(), DAY)
    assert not mar.active_on(order(), mar.Day(date(2026, 3, 9)))
    assert not mar.active_on(order(endAt="2026-03-09T12:00:00+00:00",
                                   startAt="2026-03-01T08:00:00+00:00"), DAY)
    assert not mar.active_on(order(status="cancelled"), DAY)
    assert not mar.active_on(order(kind="lab"), DAY)


def given_at(moment: datetime, status: str = "given") -> dict[str, Any]:
    return {"status": status, "at": moment.isoformat(), "administeredAt": moment.isoformat()}


def test_a_prn_dose_sooner_than_the_interval_conflicts() -> None:
    entries = [given_at(at(8))]
    conflict = mar.prn_conflict(entries, at(11, 30), 4, name="Paracetamol")
    assert conflict is not None and conflict.type == "prn-interval"
    assert "at least 4 h" in conflict.detail and "3 h 30 min" in conflict.detail


def test_a_prn_dose_at_the_interval_does_not_conflict() -> None:
    assert mar.prn_conflict([given_at(at(8))], at(12), 4) is None


def test_doses_not_given_and_missing_intervals_do_not_count() -> None:
    assert mar.prn_conflict([given_at(at(8), "not_given")], at(9), 4) is None
    assert mar.prn_conflict([given_at(at(8))], at(9), None) is None
