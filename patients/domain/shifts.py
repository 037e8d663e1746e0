"""A ward's shifts and who looks after which bed in one of them. Plain Python.

A shift is named by the local date it starts on and its kind: ``2026-11-25-day`` (07:00 to
19:00 by default) and ``2026-11-25-night`` (19:00 to 07:00 the next morning). Each ward's
hours are in its reference entry (``dayShiftStart``, ``nightShiftStart``, "HH:MM" local
time); the day shift runs from the first to the second and the night shift the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from enum import StrEnum
from typing import Any

from patients.domain.errors import InvalidInput

DEFAULT_DAY_START = "07:00"
DEFAULT_NIGHT_START = "19:00"
_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-(day|night)$")
# The shifts a ward may name: far enough either way for any stay on record, and never so
# far that a shift's hours, or the one before or after, fall off the calendar.
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(2999, 12, 31)


class ShiftOutOfRange(InvalidInput):
    """A well-formed shift name on a day no ward works (before 1900 or after 2999)."""


class ShiftKind(StrEnum):
    DAY = "day"
    NIGHT = "night"


SHIFT_LABELS = {ShiftKind.DAY: "Day shift", ShiftKind.NIGHT: "Night shift"}


def parse_clock(value: Any) -> time | None:
    """"HH:MM" as a time of day; None when it is not one."""
    if not isinstance(value, str) or not re.fullmatch(r"\d{2}:\d{2}", value.strip()):
        return None
    try:
        return time.fromisoformat(value.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class ShiftHours:
    """The day shift's start and the night shift's start, local times of day."""

    day_start: time = time(7, 0)
    night_start: time = time(19, 0)

    @classmethod
    def of_ward(cls, ward: Mapping[str, Any]) -> ShiftHours:
        """A ward entry's hours; the defaults where it names none (reference data checks
        what it does name, see :func:`hours_problem`)."""
        day = parse_clock(ward.get("dayShiftStart")) or time(7, 0)
        night = parse_clock(ward.get("nightShiftStart")) or time(19, 0)
        return cls(day, night) if day < night else cls()

    def text(self, kind: ShiftKind) -> str:
        a, b = ((self.day_start, self.night_start) if kind == ShiftKind.DAY
                else (self.night_start, self.day_start))
        return f"{a:%H:%M}–{b:%H:%M}"


def hours_problem(ward: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, problem) when a ward entry's shift hours are given but unreadable."""
    for name in ("dayShiftStart", "nightShiftStart"):
        if ward.get(name) not in (None, "") and parse_clock(ward.get(name)) is None:
            return name, "give a local time of day as HH:MM, such as 07:00."
    day, night = (parse_clock(ward.get(n)) for n in ("dayShiftStart", "nightShiftStart"))
    if (day or time(7, 0)) >= (night or time(19, 0)):
        return "nightShiftStart", "the night shift starts after the day shift, within one day."
    return None


@dataclass(frozen=True, order=True)
class Shift:
    """One shift of a ward: the local date it starts on and its kind."""

    day: date
    kind: ShiftKind

    @property
    def name(self) -> str:
        return f"{self.day.isoformat()}-{self.kind}"

    @classmethod
    def parse(cls, text: str, *, field: str = "shift") -> Shift:
        """``2026-11-25-day`` → Shift; InvalidInput (422) for anything else, and
        :class:`ShiftOutOfRange` for a day before 1900 or after 2999."""
        m = _NAME.match((text or "").strip())
        if m is not None:
            try:
                shift = cls(date.fromisoformat(m.group(1)), ShiftKind(m.group(2)))
            except ValueError:
                pass
            else:
                if not FIRST_DAY <= shift.day <= LAST_DAY:
                    raise ShiftOutOfRange(
                        f"Name a shift between {FIRST_DAY.year} and {LAST_DAY.year}.",
                        field=field)
                return shift
        raise InvalidInput(f"{text!r} is not a shift; name one as YYYY-MM-DD-day or "
                           "YYYY-MM-DD-night.", field=field)

    @classmethod
    def at(cls, moment: datetime, hours: ShiftHours, tz: tzinfo) -> Shift:
        """The shift on at ``moment`` (aware) in a ward with ``hours`` in zone ``tz``."""
        local = moment.astimezone(tz)
        clock = local.time().replace(tzinfo=None)
        if clock < hours.day_start:
            return cls(local.date() - timedelta(days=1), ShiftKind.NIGHT)
        if clock < hours.night_start:
            return cls(local.date(), ShiftKind.DAY)
        return cls(local.date(), ShiftKind.NIGHT)

    def previous(self) -> Shift:
        if self.kind == ShiftKind.DAY:
            return Shift(self.day - timedelta(days=1), ShiftKind.NIGHT)
        return Shift(self.day, ShiftKind.DAY)

    def next(self) -> Shift:
        if self.kind == ShiftKind.NIGHT:
            return Shift(self.day + timedelta(days=1), ShiftKind.DAY)
        return Shift(self.day, ShiftKind.NIGHT)

    def bounds(self, hours: ShiftHours, tz: tzinfo) -> tuple[datetime, datetime]:
        """When the shift starts and ends, aware in ``tz``."""
        if self.kind == ShiftKind.DAY:
            return (datetime.combine(self.day, hours.day_start, tz),
                    datetime.combine(self.day, hours.night_start, tz))
        return (datetime.combine(self.day, hours.night_start, tz),
                datetime.combine(self.day + timedelta(days=1), hours.day_start, tz))


@dataclass(frozen=True)
class Nurse:
    """Who is assigned: a user's id and the name the record shows."""

    nurse_id: str
    name: str


Assignments = dict[str, Nurse]  # bed code → nurse


def assignments_to_json(assignments: Mapping[str, Nurse]) -> dict[str, dict[str, str]]:
    return {bed: {"nurseId": n.nurse_id, "nurseName": n.name}
            for bed, n in sorted(assignments.items())}


def assignments_from_json(data: Mapping[str, Any] | None) -> Assignments:
    return {bed: Nurse(str(v["nurseId"]), str(v.get("nurseName") or v["nurseId"]))
            for bed, v in (data or {}).items() if v and v.get("nurseId")}


def check_beds(wanted: Mapping[str, Any], beds: list[str]) -> None:
    """InvalidInput (422, on the bed) unless every bed named is one of the ward's."""
    unknown = sorted(b for b in wanted if b not in beds)
    if unknown:
        raise InvalidInput(f"The ward has no bed {', '.join(unknown)}.", field="beds")
