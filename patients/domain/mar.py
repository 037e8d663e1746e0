"""The medication administration record: dose times, their status on a day, the PRN interval.

Plain functions over an order's record (camelCase, as stored). A scheduled order's dose times
(slots) are its schedule's standard local times (:mod:`patients.domain.dose_times`) from its
start (``startAt``, or ``placedAt`` when none was given) until it ends: ``endAt``, or
``endedAt`` when it was cancelled or completed, whichever is first. An order placed before
schedules keeps the older rule (every ``hours`` of its frequency from the start; ``hours`` 0:
the start only). An as-needed (PRN) order has no times, only a least interval between given
doses. Each slot is named by :func:`dose_times.slot_id`; an administration answers the slot
whose minute its ``scheduledFor`` falls in. A stopped order's day keeps its dose times up to
the stop and every dose time an administration answered, even one after the stop.

A slot's status on a day, at ``now``: ``given`` / ``not_given`` when an administration names
it (``scheduledFor``); otherwise ``upcoming`` until 30 minutes before the time, ``due`` from
then to 60 minutes after, ``late`` after that until the day ends, ``missed`` once it has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from decimal import Decimal
from typing import Any

from patients.domain import dose_times
from patients.domain.checks import PRN_INTERVAL, Conflict
from patients.domain.dose_times import slot_id, slot_key
from patients.domain.errors import DomainError

DUE_BEFORE = timedelta(minutes=30)
DUE_AFTER = timedelta(minutes=60)
GIVEN, NOT_GIVEN = "given", "not_given"
RECORD_STATUSES = (GIVEN, NOT_GIVEN)
SLOT_STATUSES = ("upcoming", "due", "late", GIVEN, NOT_GIVEN, "missed")
OPEN_STATUSES = ("upcoming", "due", "late")  # a dose can still be recorded
STATUS_LABELS = {"upcoming": "Upcoming", "due": "Due", "late": "Late", GIVEN: "Given",
                 NOT_GIVEN: "Not given", "missed": "Missed"}
NOT_GIVEN_REASONS = {"refused": "Refused", "held": "Held", "unavailable": "Unavailable",
                     "patient-absent": "Patient absent", "other": "Other"}


def parse_instant(value: str | datetime, tz: tzinfo = UTC) -> datetime:
    """An aware datetime from ISO text; a time without an offset is read in ``tz``."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def instant_text(moment: datetime) -> str:
    """The stored spelling of an instant: ISO 8601 in UTC, to the second."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


# The days a MAR may be asked for: wide enough for any record, narrow enough that a day's
# neighbours and its end (the next midnight) are always dates (9999-12-31 had none).
FIRST_DAY = date(1900, 1, 1)
LAST_DAY = date(2100, 12, 31)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class BadDay(DomainError):
    """A MAR day that is not a calendar date ``YYYY-MM-DD`` from 1900 to 2100."""

    http_status = 400
    title = "Bad day"
    field = "date"
    problem_type = "bad-day"


def check_day(day: date) -> date:
    """``day`` when a MAR may show it; :class:`BadDay` otherwise."""
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadDay(f"date must be from {FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}.")
    return day


def parse_day(text: str) -> date:
    """``YYYY-MM-DD`` (exactly) from :data:`FIRST_DAY` to :data:`LAST_DAY`;
    :class:`BadDay` otherwise."""
    try:
        if not _DAY.fullmatch(text):  # fromisoformat takes 20260301 and other digits too
            raise ValueError(text)
        day = date.fromisoformat(text)
    except ValueError:
        raise BadDay(f"date must be YYYY-MM-DD, not {text[:20]!r}.") from None
    return check_day(day)


@dataclass(frozen=True)
class Day:
    """One calendar day in a time zone: ``[start, end)``."""

    day: date
    tz: tzinfo = UTC

    @property
    def start(self) -> datetime:
        return datetime.combine(self.day, time(0), self.tz)

    @property
    def end(self) -> datetime:
        return datetime.combine(self.day + timedelta(days=1), time(0), self.tz)


def is_prn(order: Mapping[str, Any]) -> bool:
    return bool(order.get("asNeeded"))


def order_start(order: Mapping[str, Any], tz: tzinfo = UTC) -> datetime:
    return parse_instant(order.get("startAt") or order["placedAt"], tz)


def order_end(order: Mapping[str, Any], tz: tzinfo = UTC) -> datetime | None:
    """When the course ends: its planned ``endAt`` or, sooner, ``endedAt`` (cancelled or
    completed); None while open-ended."""
    ends = [parse_instant(order[name], tz) for name in ("endAt", "endedAt") if order.get(name)]
    return min(ends) if ends else None


# The stored times a course is computed from, and what a reader is told when one cannot be
# read (older data, a restore, another writer: a value the API would refuse today).
COURSE_FIELDS = {"startAt": "start time could not be read",
                 "endAt": "end time could not be read",
                 "endedAt": "the time it ended could not be read"}


def data_errors(order: Mapping[str, Any]) -> list[dict[str, str]]:
    """The order's stored course fields that cannot be read as instants, as
    ``[{field, message}]`` (empty when all can): readers answer the rest and name these."""
    errors = []
    for name, message in COURSE_FIELDS.items():
        value = order.get(name)
        if value in (None, ""):
            continue
        try:
            parse_instant(value)
        except (TypeError, ValueError, OverflowError):
            errors.append({"field": name, "message": message})
    return errors


def readable_course(order: Mapping[str, Any]) -> bool:
    """True when the order's start and end (when given) can be read."""
    return not data_errors(order)


def slot_step(hours: float | Decimal | None) -> timedelta | None:
    """The time between dose times of an interval frequency of ``hours`` (None: once only)."""
    if not hours or hours <= 0:
        return None
    return max(timedelta(hours=float(hours)), timedelta(minutes=15))


def _schedulable(order: Mapping[str, Any]) -> bool:
    return (not is_prn(order) and order.get("kind", "medication") == "medication"
            and readable_course(order))


def slots_between(order: Mapping[str, Any], hours: float | Decimal | None, lo: datetime,
                  hi: datetime, tz: tzinfo = UTC) -> list[datetime]:
    """The order's dose times in ``[lo, hi)`` (none for PRN orders, nor for an order whose
    course cannot be read: :func:`data_errors` names it; no guessed times). A stored time
    without an offset is read in ``tz``."""
    if not _schedulable(order):
        return []
    return dose_times.between(order.get("schedule"), hours, order_start(order, tz),
                              order_end(order, tz), lo, hi)


def slot_times(order: Mapping[str, Any], hours: float | Decimal | None, day: Day
               ) -> list[datetime]:
    """The order's dose times within ``day``."""
    return slots_between(order, hours, day.start, day.end, day.tz)


def answered_times(order: Mapping[str, Any], hours: float | Decimal | None, day: Day,
                   entries: Iterable[Mapping[str, Any]]) -> list[datetime]:
    """The order's dose times within ``day`` and, besides, every one of that day an
    administration answered: a dose given (or not) before the order stopped keeps its time
    even when the time itself came after the stop (a dose given early, then cancelled)."""
    times = {slot_key(t): t for t in slot_times(order, hours, day)}
    if not _schedulable(order):
        return list(times.values())
    for entry in entries:
        slot = slot_of(entry)
        if slot is not None and day.start <= slot < day.end:
            times.setdefault(slot_key(slot), dose_times.minute(slot))
    return sorted(times.values())


def find_slot(order: Mapping[str, Any], hours: float | Decimal | None, moment: datetime
              ) -> datetime | None:
    """The order's dose time in the minute of ``moment`` (seconds and fractions of a second
    do not matter), or None when it has none then."""
    at = dose_times.minute(moment)
    found = slots_between(order, hours, at, at + timedelta(minutes=1))
    return found[0] if found else None


def is_slot(order: Mapping[str, Any], hours: float | Decimal | None, moment: datetime,
            tz: tzinfo = UTC) -> bool:
    """True when ``moment`` is (in its minute) one of the order's dose times."""
    return find_slot(order, hours, moment) is not None


def recorded_keys(entries: Iterable[Mapping[str, Any]]) -> set[str]:
    """The slot keys the administrations answered (given or not given)."""
    return {slot_key(slot) for e in entries if (slot := slot_of(e)) is not None}


def first_open_slot(order: Mapping[str, Any], hours: float | Decimal | None,
                    recorded: Iterable[str]) -> datetime | None:
    """The order's first dose time whose slot key is not in ``recorded``; None when every
    dose time of its course is answered (or it has none)."""
    if not _schedulable(order):
        return None
    return dose_times.first_open(order.get("schedule"), hours, order_start(order),
                                 order_end(order), set(recorded))


def open_slots(order: Mapping[str, Any], hours: float | Decimal | None, lo: datetime,
               hi: datetime) -> list[datetime]:
    """The order's dose times in ``[lo, hi)`` no administration answers yet."""
    done = recorded_keys(order.get("administrations") or ())
    return [t for t in slots_between(order, hours, lo, hi) if slot_key(t) not in done]


def due_slot(order: Mapping[str, Any], hours: float | Decimal | None, at: datetime
             ) -> datetime | None:
    """The one open dose time a dose at ``at`` answers: the open slot whose due window
    (:data:`DUE_BEFORE` before it to :data:`DUE_AFTER` after) holds ``at``; None when no
    slot's does, or more than one's (the nurse says which)."""
    near = open_slots(order, hours, at - DUE_AFTER, at + DUE_BEFORE + timedelta(minutes=1))
    near = [t for t in near if t - DUE_BEFORE <= at <= t + DUE_AFTER]
    return near[0] if len(near) == 1 else None


def answered_near(entries: Iterable[Mapping[str, Any]], at: datetime
                  ) -> tuple[datetime, Mapping[str, Any]] | None:
    """The dose time already answered whose due window holds ``at`` (the nearest), with its
    administration: what a second dose at the same time is told about."""
    near = [(slot, e) for e in entries if (slot := slot_of(e)) is not None
            and slot - DUE_BEFORE <= at <= slot + DUE_AFTER]
    return min(near, key=lambda pair: abs(pair[0] - at)) if near else None


def administered_at(entry: Mapping[str, Any]) -> datetime:
    """When a recorded administration happened (older entries only have ``at``)."""
    return parse_instant(entry.get("administeredAt") or entry["at"])


def slot_of(entry: Mapping[str, Any]) -> datetime | None:
    return parse_instant(entry["scheduledFor"]) if entry.get("scheduledFor") else None


def entry_status(entry: Mapping[str, Any]) -> str:
    return entry.get("status") or GIVEN  # entries before the MAR were all doses given


def slot_status(slot: datetime, entry: Mapping[str, Any] | None, now: datetime,
                day_end: datetime) -> str:
    """``given`` / ``not_given`` when recorded, else upcoming | due | late | missed."""
    if entry is not None:
        return entry_status(entry)
    if now < slot - DUE_BEFORE:
        return "upcoming"
    if now <= slot + DUE_AFTER:
        return "due"
    if now < day_end:
        return "late"
    return "missed"


def of_day(entry: Mapping[str, Any], day: Day) -> bool:
    """An administration recorded within ``day``, or answering one of its dose times."""
    slot = slot_of(entry)
    return (day.start <= administered_at(entry) < day.end
            or (slot is not None and day.start <= slot < day.end))


def day_record(order: Mapping[str, Any], hours: float | Decimal, day: Day, now: datetime
               ) -> dict[str, Any]:
    """The order's MAR row for ``day``: ``slots`` ({slotId, scheduledFor, status,
    administration}),
    ``administrations`` (every one recorded that day, newest last) and ``dataErrors`` (the
    stored fields that could not be read, :func:`data_errors`; no slots then)."""
    entries = list(order.get("administrations") or [])
    by_slot: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        slot = slot_of(entry)
        if slot is not None:
            by_slot.setdefault(slot_key(slot), entry)
    order_id = str(order.get("orderId") or "")
    slots = [{"slotId": slot_id(order_id, t), "scheduledFor": dose_times.slot_text(t),
              "status": slot_status(t, by_slot.get(slot_key(t)), now, day.end),
              "administration": by_slot.get(slot_key(t))}
             for t in answered_times(order, hours, day, entries)]
    todays = [e for e in entries if of_day(e, day)]
    todays.sort(key=administered_at)
    return {"slots": slots, "administrations": todays, "dataErrors": data_errors(order)}


def active_on(order: Mapping[str, Any], day: Day, tz: tzinfo = UTC) -> bool:
    """A medication order whose course overlaps ``day`` (from its start to its end). One
    whose course cannot be read counts while it is active: the MAR shows it with its
    :func:`data_errors` rather than leave a prescription out."""
    if order.get("kind") != "medication":
        return False
    if not readable_course(order):
        return order.get("status") not in ("completed", "cancelled")
    # A dose recorded that day, or answering a dose time of that day, keeps the row, even
    # when the order stopped before the day began (a dose given early for 00:05, then the
    # order cancelled at 23:50) or starts after it ended.
    if any(of_day(e, day) for e in order.get("administrations") or []):
        return True
    start, end = order_start(order, tz), order_end(order, tz)
    if start >= day.end or (end is not None and end < day.start):
        return False
    return order.get("status") not in ("completed", "cancelled")


def prn_conflict(entries: Iterable[Mapping[str, Any]], at: datetime,
                 min_interval_hours: float | Decimal | None, *, name: str = "this drug"
                 ) -> Conflict | None:
    """A ``prn-interval`` conflict when a dose given at ``at`` comes sooner than the least
    interval after (or before) another dose given."""
    if not min_interval_hours:
        return None
    interval = timedelta(hours=float(min_interval_hours))
    given = [administered_at(e) for e in entries if entry_status(e) == GIVEN]
    close = [t for t in given if abs(at - t) < interval]
    if not close:
        return None
    nearest = min(close, key=lambda t: abs(at - t))
    gap = abs(at - nearest)
    minutes = int(gap.total_seconds() // 60)
    return Conflict(PRN_INTERVAL, (
        f"{name} as needed: at least {_hours(min_interval_hours)} h between doses; a dose was "
        f"given at {instant_text(nearest)}, {minutes // 60} h {minutes % 60:02d} min "
        f"{'before' if nearest <= at else 'after'} this one."))


def _hours(value: float | Decimal) -> str:
    text = format(Decimal(str(value)).normalize(), "f")
    return text
