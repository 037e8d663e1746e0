"""Dose times: a frequency's standard local clock times, an order's schedule, its slots.

A Frequency (reference data) says when a ward gives doses: local ``times`` ("08:00", …),
or ``hours`` with an ``anchor`` clock time (every 6 hours from 00:00: 00, 06, 12, 18),
``once`` (ONCE, STAT: one dose, at the start) or ``prn`` (as needed: no times). An order
keeps the schedule it was prescribed with (:func:`schedule_for`: the local times, the
hospital's time zone, the minimum interval and, when the first dose is "now", that one-off
time), so a later change of reference data or of the zone never moves a slot already
shown or recorded. Orders placed before schedules (no ``schedule``) keep their rule: every
``frequencyHours`` from the start.

A slot is one dose time of one order: an instant, in UTC, to the minute. Its ``slot_id`` is
the order id and that minute (``<orderId>.20260329T0700Z``): the same on every read and on
both sides of a clock change. Two spellings of one time that differ only in seconds or
fractions of a second name the same slot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

FIRST_DOSE_NEXT, FIRST_DOSE_NOW = "next", "now"
FIRST_DOSES = (FIRST_DOSE_NEXT, FIRST_DOSE_NOW)
FIRST_DOSE_LABELS = {FIRST_DOSE_NEXT: "At the next standard time",
                     FIRST_DOSE_NOW: "Now, then at the standard times"}
MAX_SLOTS_PER_DAY = 96  # a frequency of 15 minutes; more is not a schedule
_CLOCK = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")
_STAMP = "%Y%m%dT%H%MZ"
_DAY = timedelta(days=1)
_LAST = datetime(2101, 1, 1, tzinfo=UTC)  # courses end by 2100 (orders.LATEST_YEAR)


# --- frequencies (reference data) ------------------------------------------------------

def parse_clock(text: object) -> time:
    """``HH:MM`` (24-hour, two digits each) as a time; ValueError otherwise."""
    match = _CLOCK.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a clock time HH:MM")
    return time(int(match[1]), int(match[2]))


def _clock_text(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def is_prn(frequency: Mapping[str, Any]) -> bool:
    return bool(frequency.get("prn"))


def is_once(frequency: Mapping[str, Any]) -> bool:
    """One dose at the start: ``once`` (STAT, ONCE), or an older entry with ``hours`` 0."""
    return bool(frequency.get("once")) or (
        not frequency.get("prn") and not frequency.get("times")
        and frequency.get("hours") is not None and not frequency.get("hours"))


def frequency_times(frequency: Mapping[str, Any]) -> list[str] | None:
    """A frequency's standard local times, sorted (``[]`` for once-only and PRN); None when
    it has only an interval and no anchor (doses every ``hours`` from the order's start)."""
    if is_prn(frequency) or is_once(frequency):
        return []
    if frequency.get("times"):
        return sorted({parse_clock(t).strftime("%H:%M") for t in frequency["times"]})
    hours, anchor = frequency.get("hours"), frequency.get("anchor")
    if hours and anchor:
        step = int(Decimal(str(hours)) * 60)
        start = parse_clock(anchor)
        first = start.hour * 60 + start.minute
        return sorted({_clock_text((first + k * step) % 1440) for k in range(1440 // step)})
    return None


def schedule_for(frequency: Mapping[str, Any], *, zone: str, start: datetime,
                 first_dose: str = FIRST_DOSE_NEXT) -> dict[str, Any] | None:
    """The schedule an order keeps (None: as needed, or an interval from the start).
    ``first_dose`` "now": a one-off dose time at ``start``, then the standard times;
    "next": the standard times from ``start`` on."""
    if is_prn(frequency):
        return None
    if is_once(frequency):
        return {"once": True, "timeZone": zone}
    times = frequency_times(frequency)
    if times is None:
        return None
    schedule: dict[str, Any] = {"times": times, "timeZone": zone,
                                "minIntervalHours": frequency.get("minIntervalHours")}
    if first_dose == FIRST_DOSE_NOW:
        schedule["firstDoseAt"] = slot_text(start)
    return schedule


# --- slots ------------------------------------------------------------------------------

def minute(moment: datetime) -> datetime:
    """``moment`` in UTC, cut to the minute: what identifies a dose time."""
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def slot_text(moment: datetime) -> str:
    """A dose time as stored and answered: ISO 8601 in UTC, to the minute."""
    return minute(moment).isoformat()


def slot_key(moment: datetime) -> str:
    return minute(moment).strftime(_STAMP)


def slot_id(order_id: str, moment: datetime) -> str:
    """The stable name of the order's dose time at ``moment``."""
    return f"{order_id}.{slot_key(moment)}"


def parse_slot_id(text: str) -> tuple[str, datetime]:
    """(order id, the dose time) from :func:`slot_id`'s spelling; ValueError otherwise."""
    order_id, _, stamp = (text or "").rpartition(".")
    if not order_id:
        raise ValueError(f"{text!r} is not a slot id")
    return order_id, datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC)


def _interval(start: datetime, hours: float | Decimal | None, lo: datetime, hi: datetime
              ) -> list[datetime]:
    """The older rule: every ``hours`` from ``start`` (once only when 0)."""
    if not hours or hours <= 0:
        return [start] if lo <= start < hi else []
    step = max(timedelta(hours=float(hours)), timedelta(minutes=15))
    skip = max(0, -(-(lo - start) // step))  # ceil: the first time at or after lo
    times, moment = [], start + skip * step
    while moment < hi and len(times) < MAX_SLOTS_PER_DAY:
        times.append(moment)
        moment += step
    return times


def _local_days(lo: datetime, hi: datetime, zone: ZoneInfo) -> list[date]:
    first, last = lo.astimezone(zone).date(), hi.astimezone(zone).date()
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def between(schedule: Mapping[str, Any] | None, hours: float | Decimal | None,
            start: datetime, end: datetime | None, lo: datetime, hi: datetime
            ) -> list[datetime]:
    """An order's dose times in ``[lo, hi)``, ascending, each to the minute in UTC: from
    ``start`` (cut to the minute) until ``end`` (excluded). Standard times are local clock
    times in the schedule's zone: a time a spring-forward skips falls an hour later, a time
    a fall-back repeats is given once (its first occurrence)."""
    first = minute(start)
    lo, hi = max(lo, first), min(hi, end) if end is not None else hi
    if lo >= hi:
        return []
    if schedule is None:
        return [minute(t) for t in _interval(first, hours, lo, hi)]
    if schedule.get("once"):
        return [first] if lo <= first < hi else []
    zone = ZoneInfo(schedule.get("timeZone") or "UTC")
    found: set[datetime] = set()
    earliest = first
    if schedule.get("firstDoseAt"):
        one_off = minute(datetime.fromisoformat(schedule["firstDoseAt"]))
        if lo <= one_off < hi:
            found.add(one_off)
        gap = schedule.get("minIntervalHours")
        # the standard times resume once the one-off dose is far enough behind
        earliest = one_off + (timedelta(hours=float(gap)) if gap else timedelta(minutes=1))
    clocks = [parse_clock(t) for t in schedule.get("times") or ()]
    for day in _local_days(lo, hi, zone):
        for clock in clocks:
            moment = datetime.combine(day, clock, zone).astimezone(UTC)
            if lo <= moment < hi and moment >= earliest:
                found.add(moment)
    return sorted(found)[:MAX_SLOTS_PER_DAY * max(1, (hi - lo).days + 1)]


def first_open(schedule: Mapping[str, Any] | None, hours: float | Decimal | None,
               start: datetime, end: datetime | None, recorded: set[str]) -> datetime | None:
    """The first dose time not in ``recorded`` (slot keys), or None when every dose time
    of the course is. Looks at most ``len(recorded) + 1`` dose times: one of them is open."""
    seen, lo = 0, minute(start)
    empty_days = 0
    while lo < (end or _LAST) and empty_days < 400:
        times = between(schedule, hours, start, end, lo, lo + _DAY)
        empty_days = 0 if times else empty_days + 1
        for moment in times:
            if slot_key(moment) not in recorded:
                return moment
            seen += 1
            if seen > len(recorded):
                return None
        if schedule is not None and schedule.get("once") or (schedule is None and not hours):
            return None
        lo += _DAY
    return None
