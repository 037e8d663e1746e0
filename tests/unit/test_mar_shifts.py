"""The MAR by the ward's shifts: the day cut at the day shift's hours, the shift on now
first, with a fixed clock."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.exceptions import ImproperlyConfigured

from patients.pages.mar_shifts import by_shift, day_shift

LONDON = ZoneInfo("Europe/London")
DAY = date(2026, 3, 29)  # the spring-forward day: 01:00 GMT is 02:00 BST
COLUMNS = ["00:00", "02:00", "08:00", "14:00", "19:30", "22:00"]
SHIFT = ("07:30", "19:30")


def _rows() -> list[dict[str, Any]]:
    return [{"orderId": "o1", "cells": [[{"at": c}] for c in COLUMNS]},
            {"orderId": "o2", "cells": [[] for _ in COLUMNS]}]


def _at(hh: int, mm: int = 0, day: date = DAY) -> datetime:
    return datetime(day.year, day.month, day.day, hh, mm, tzinfo=LONDON)


def test_it_puts_the_day_shift_first_during_the_day_then_the_later_ones() -> None:
    shifts = by_shift(COLUMNS, _rows(), day=DAY, now=_at(14, 10), shift=SHIFT)
    assert [s["key"] for s in shifts] == ["day", "night", "night-before"]
    assert [s["current"] for s in shifts] == [True, False, False]
    assert shifts[0]["columns"] == ["08:00", "14:00"]
    assert shifts[0]["rows"][0]["cells"] == [[{"at": "08:00"}], [{"at": "14:00"}]]
    assert shifts[1]["columns"] == ["19:30", "22:00"]  # the day shift ends at 19:30
    assert shifts[2]["columns"] == ["00:00", "02:00"] and shifts[2]["past"]


def test_it_puts_the_night_first_in_the_evening_and_in_the_small_hours() -> None:
    evening = by_shift(COLUMNS, _rows(), day=DAY, now=_at(19, 30), shift=SHIFT)
    assert [s["key"] for s in evening] == ["night", "night-before", "day"]
    small_hours = by_shift(COLUMNS, _rows(), day=DAY, now=_at(3, 5), shift=SHIFT)
    assert [s["key"] for s in small_hours] == ["night-before", "day", "night"]
    assert small_hours[0]["current"] and small_hours[0]["hours"] == "until 07:30"


def test_another_day_is_in_clock_order_with_no_current_shift() -> None:
    shifts = by_shift(COLUMNS, _rows(), day=DAY, now=_at(14, 0, date(2026, 3, 30)),
                      shift=SHIFT)
    assert [s["key"] for s in shifts] == ["night-before", "day", "night"]
    assert not any(s["current"] for s in shifts)


def test_a_shift_without_dose_times_is_kept_empty() -> None:
    shifts = by_shift(["08:00"], [{"cells": [[]]}], day=DAY, now=_at(23, 0), shift=SHIFT)
    assert shifts[0]["key"] == "night" and shifts[0]["columns"] == []
    assert shifts[0]["rows"] == [{"cells": []}]


def test_the_day_shift_is_a_setting(settings: Any) -> None:
    settings.WARD_DAY_SHIFT = "08:00–20:00"
    assert day_shift() == ("08:00", "20:00")
    for bad in ("8-20", "20:00-08:00", "soon"):
        with pytest.raises(ImproperlyConfigured):
            day_shift(bad)
