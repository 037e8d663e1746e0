"""A fixed clock in the hospital's zone (Europe/London) for tests whose dose times depend on
now. ``time-machine`` moves ``datetime.now``, ``time.time`` and so Django's
``timezone.now()`` for the whole process, the live server's thread included; the clock
ticks on from where it is put."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine

LONDON = ZoneInfo("Europe/London")


def london(day: str, clock: str) -> datetime:
    """A wall-clock time in London on ``day`` (YYYY-MM-DD), as an aware datetime."""
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=LONDON)


def slot_of(order_id: str, day: str, clock: str) -> str:
    """The slot id of the order's dose at a London wall-clock time (its minute in UTC)."""
    return f"{order_id}.{london(day, clock).astimezone(UTC):%Y%m%dT%H%MZ}"


_UTC_WORD = re.compile(r"\bUTC\b")


def names_utc(html: str) -> bool:
    """Whether a page says "UTC" anywhere (text or attributes) as a word: a CSRF token is
    random letters and may hold the three (run AH)."""
    return bool(_UTC_WORD.search(html))


def utc_text(day: str, clock: str) -> str:
    """A London wall-clock time as the API answers a dose time (UTC, to the minute)."""
    return london(day, clock).astimezone(UTC).isoformat()


class Clock:
    """The clock, put at a London time on one day and moved by the test."""

    def __init__(self, day: str, coordinates: Any) -> None:
        self.day = day
        self._coordinates = coordinates

    def at(self, clock: str) -> datetime:
        moment = london(self.day, clock)
        self._coordinates.move_to(moment)
        return moment


@pytest.fixture
def fixed_clock(settings: Any) -> Iterator[Callable[[str, str], Clock]]:
    """``fixed_clock("2026-06-10", "07:45")`` puts the clock there, with Europe/London the
    hospital's zone; it goes back when the test ends."""
    settings.HOSPITAL_TIME_ZONE = "Europe/London"
    travels: list[Any] = []

    def travel(day: str, clock: str) -> Clock:
        traveller = time_machine.travel(london(day, clock), tick=True)
        travels.append(traveller)
        return Clock(day, traveller.start())

    yield travel
    for traveller in reversed(travels):
        traveller.stop()
