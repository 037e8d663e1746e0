"""Dates and times in the hospital's time, in words: one helper for every page."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.template import Context, Template

from hisadmin.core.local_time import clock_time, human_date, human_time, to_local

LONDON = ZoneInfo("Europe/London")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def london(settings: Any) -> None:
    settings.HOSPITAL_TIME_ZONE = "Europe/London"


def test_it_shows_an_instant_in_local_time_without_this_years_year() -> None:
    assert human_time("2026-11-25T14:00:00+00:00", now=NOW) == "Wed 25 Nov, 14:00"
    assert human_time("2026-07-01T13:00:00+00:00", now=NOW) == "Wed 1 Jul, 14:00"  # BST


def test_it_shows_the_year_when_not_this_year() -> None:
    assert human_time("2025-11-25T14:00:00+00:00", now=NOW) == "Tue 25 Nov 2025, 14:00"


def test_it_takes_this_year_in_the_hospitals_zone() -> None:
    new_years_eve = datetime(2026, 12, 31, 23, 30, tzinfo=ZoneInfo("America/New_York"))
    # 04:30 on 1 Jan 2027 in London: that is "this year" there
    assert human_time("2027-01-01T04:45:00+00:00", now=new_years_eve) == "Fri 1 Jan, 04:45"


def test_it_crosses_the_spring_forward_gap() -> None:
    assert human_time("2026-03-29T00:59:59+00:00", now=NOW) == "Sun 29 Mar, 00:59"
    assert human_time("2026-03-29T01:00:00+00:00", now=NOW) == "Sun 29 Mar, 02:00"


def test_it_tells_the_two_fall_back_hours_by_their_offsets_only_once_shown() -> None:
    first = human_time("2026-10-25T00:30:00+00:00", now=NOW)
    second = human_time("2026-10-25T01:30:00+00:00", now=NOW)
    assert first == second == "Sun 25 Oct, 01:30"  # the repeated hour, BST then GMT
    assert to_local("2026-10-25T00:30:00+00:00").utcoffset().total_seconds() == 3600
    assert to_local("2026-10-25T01:30:00+00:00").utcoffset().total_seconds() == 0


def test_it_drops_microseconds_and_shows_seconds_when_asked() -> None:
    value = "2026-11-25T14:00:05.123456+00:00"
    assert human_time(value, now=NOW) == "Wed 25 Nov, 14:00"
    assert human_time(value, now=NOW, seconds=True) == "Wed 25 Nov, 14:00:05"
    assert human_time("2026-11-25T14:00:05.5Z", now=NOW) == "Wed 25 Nov, 14:00"


def test_it_reads_aware_and_naive_datetimes_naive_as_utc() -> None:
    aware = datetime(2026, 7, 1, 15, 0, tzinfo=ZoneInfo("Europe/Madrid"))
    assert human_time(aware, now=NOW) == "Wed 1 Jul, 14:00"
    assert human_time(datetime(2026, 7, 1, 13, 0), now=NOW) == "Wed 1 Jul, 14:00"
    assert human_time("2026-07-01T13:00:00", now=NOW) == "Wed 1 Jul, 14:00"


def test_it_shows_nothing_for_nothing_and_unreadable_text_as_it_is() -> None:
    assert human_time(None) == human_time("") == human_date(None) == clock_time(None) == ""
    assert human_time("soon") == "soon"


def test_a_date_alone_always_has_its_year() -> None:
    assert human_date(date(2026, 11, 25)) == "Wed 25 Nov 2026"
    assert human_date("1960-01-01") == "Fri 1 Jan 1960"
    assert human_date("1960-01-01", weekday=False) == "1 Jan 1960"
    # an instant by its local day: 23:30 UTC on 30 June is 1 July in London
    assert human_date("2026-06-30T23:30:00+00:00") == "Wed 1 Jul 2026"


def test_the_clock_is_local() -> None:
    assert clock_time("2026-07-01T07:00:00+00:00") == "08:00"


def test_the_template_filters_use_the_helper() -> None:
    out = Template('{% load hospital_time %}{{ a|when }} | {{ a|when:"seconds" }} | {{ a|day }}'
                   " | {{ a|day:'no weekday' }} | {{ a|clock }} | {{ b|when }}").render(Context(
                       {"a": "2020-07-01T07:00:09+00:00", "b": None}))
    assert out == ("Wed 1 Jul 2020, 08:00 | Wed 1 Jul 2020, 08:00:09 | Wed 1 Jul 2020 | 1 Jul 2020"
                   " | 08:00 | ")
