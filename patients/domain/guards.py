"""The guards at the bedside: run when a dose given is recorded, before anything is written.

Pure: the caller hands in the order (camelCase, as stored), its slot, when the dose was
given, the medication and frequency entries, and the doses of that medication the patient
was given (:func:`given_doses`, across all their orders of it). Each guard returns a
:class:`~patients.domain.checks.Conflict` that a reason may override (``early-dose``,
``dose-interval``, ``daily-dose``); :func:`hard_stop` says why a dose passes a hard limit,
which nothing overrides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any

from patients.domain.checks import (
    DAILY_DOSE,
    DOSE_INTERVAL,
    EARLY_DOSE,
    EARLY_NOT_GIVEN,
    Conflict,
    above_hard_limit,
)
from patients.domain.errors import UnitMismatch
from patients.domain.units import convert

EARLY_WINDOW_MINUTES = 60  # a dose may be given this long before its slot without a warning
DAY = timedelta(hours=24)
# A scheduled frequency without minIntervalHours: half its interval, so a round given early
# after a late one passes while a second dose soon after the first is caught.
DERIVED_INTERVAL_SHARE = Decimal("0.5")

Entry = Mapping[str, Any]


@dataclass(frozen=True)
class GivenDose:
    """A dose given, in the medication's dose unit."""

    order_id: str
    at: datetime
    amount: Decimal


def _text(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _gap(delta: timedelta) -> str:
    minutes = int(abs(delta).total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _when(moment: datetime, tz: tzinfo) -> str:
    """A time as a ward reads it: local, to the minute ("Wed 25 Nov, 14:00")."""
    return moment.astimezone(tz).strftime("%a %d %b, %H:%M")


def _parse(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


# ------------------------------------------------------------------ early
def _ahead(check: str, slot: datetime | None, at: datetime, window: timedelta, tz: tzinfo,
           *, doing: str, rule: str) -> Conflict | None:
    """``check`` when ``at`` is more than ``window`` before ``slot`` (none without a slot)."""
    if slot is None or at >= slot - window:
        return None
    return Conflict(check, (
        f"This dose is for {_when(slot, tz)} and is being {doing} at {_when(at, tz)}, "
        f"{_gap(slot - at)} {rule} at most {int(window.total_seconds() // 60)} min before "
        "their time."))


def early_dose(slot: datetime | None, at: datetime, window: timedelta, tz: tzinfo = UTC
               ) -> Conflict | None:
    """A dose given more than ``window`` before the slot it answers (none without a slot);
    times said in ``tz``."""
    return _ahead(EARLY_DOSE, slot, at, window, tz, doing="given",
                  rule="early; doses are given")


def early_not_given(slot: datetime | None, at: datetime, window: timedelta, tz: tzinfo = UTC
                    ) -> Conflict | None:
    """A dose recorded as not given more than ``window`` before its slot (the same window as
    a dose given early): the shift that would give it never sees it due, so it takes a
    reason of its own."""
    return _ahead(EARLY_NOT_GIVEN, slot, at, window, tz, doing="recorded as not given",
                  rule="ahead, and the shift that gives it will not see it due; doses are "
                       "recorded as not given")


# ------------------------------------------------------------------ interval
def min_interval_hours(order: Entry, frequency: Entry | None, medication: Entry | None
                       ) -> Decimal | None:
    """The least time between two doses of the order: a PRN order's medication's
    ``prnMinIntervalHours``; a scheduled one's frequency's ``minIntervalHours``, or, when the
    frequency does not say, half its ``hours``. None for a once-only frequency."""
    if order.get("asNeeded"):
        value = (medication or {}).get("prnMinIntervalHours")
        return Decimal(str(value)) if value else None
    if frequency is not None and frequency.get("minIntervalHours"):
        return Decimal(str(frequency["minIntervalHours"]))
    # the frequency as it is now, or as it travelled with the order when it is gone
    hours = Decimal(str((frequency or {}).get("hours", order.get("frequencyHours")) or 0))
    return hours * DERIVED_INTERVAL_SHARE if hours > 0 else None


def dose_interval(doses: Iterable[GivenDose], order_id: str, at: datetime,
                  hours: Decimal | None, *, name: str, tz: tzinfo = UTC) -> Conflict | None:
    """A dose given sooner than ``hours`` after (or before, for a dose recorded late) another
    dose of the same order (``order_id``) given."""
    if not hours:
        return None
    interval = timedelta(hours=float(hours))
    close = [d.at for d in doses if d.order_id == order_id and abs(at - d.at) < interval]
    if not close:
        return None
    nearest = min(close, key=lambda t: abs(at - t))
    return Conflict(DOSE_INTERVAL, (
        f"{name}: at least {_text(hours)} h between doses; a dose was given at "
        f"{_when(nearest, tz)}, {_gap(at - nearest)} {'before' if nearest <= at else 'after'} "
        "this one."))


# ------------------------------------------------------------------ 24 hours
def given_doses(orders: Iterable[Entry], medication_code: str, units: Mapping[str, Entry],
                dose_unit: Entry | None) -> list[GivenDose]:
    """Every dose given on ``orders`` of ``medication_code``, in ``dose_unit`` (doses not
    given do not count; a dose whose unit cannot be converted counts in its own number, as
    the safer guess)."""
    found = []
    for order in orders:
        if order.get("medicationCode") != medication_code:
            continue
        for entry in order.get("administrations") or []:
            if (entry.get("status") or "given") != "given" or entry.get("dose") in (None, ""):
                continue
            amount = Decimal(str(entry["dose"]))
            unit = units.get(entry.get("unit") or "") or {"code": entry.get("unit")}
            if dose_unit is not None:
                try:
                    amount = convert(amount, unit, dose_unit)
                except UnitMismatch:
                    pass
            at = _parse(entry.get("administeredAt") or entry["at"])
            found.append(GivenDose(str(order.get("orderId") or ""), at, amount))
    return found


def given_in_day(doses: Iterable[GivenDose], at: datetime) -> Decimal:
    """The total given in the 24 hours up to ``at`` (``at`` itself included)."""
    return sum((d.amount for d in doses if at - DAY < d.at <= at), Decimal(0))


def daily_dose(medication: Entry, before: Decimal, amount: Decimal, *, code: str
               ) -> Conflict | None:
    """This dose would take the 24-hour total past the medication's ``maxDailyDose``."""
    limit = medication.get("maxDailyDose")
    total = before + amount
    if limit is None or total <= Decimal(str(limit)):
        return None
    drug = medication.get("name") or medication.get("code")
    return Conflict(DAILY_DOSE, (
        f"{_text(before)} {code} of {drug} given in the last 24 hours + this dose of "
        f"{_text(amount)} {code} = {_text(total)} {code}, above the maximum daily dose of "
        f"{_text(Decimal(str(limit)))} {code}."))


def hard_stop(medication: Entry, before: Decimal, amount: Decimal, *, code: str) -> str | None:
    """Why this dose passes a hard limit (the dose itself, or the 24-hour total with it);
    None when it does not."""
    return above_hard_limit(
        medication, amount, before + amount, code=code,
        daily_words=f"{_text(before)} {code} given in the last 24 hours + {_text(amount)} "
                    f"{code}")


def guards(*, order: Entry, slot: datetime | None, at: datetime, window: timedelta,
           doses: list[GivenDose], medication: Entry, frequency: Entry | None,
           amount: Decimal, code: str, tz: tzinfo = UTC) -> list[Conflict]:
    """Every guard the dose fails, in the order early, interval, daily (times in ``tz``)."""
    name = str(order.get("medicationName") or medication.get("name") or "This drug")
    if order.get("asNeeded"):
        name += " as needed"
    found = [early_dose(slot, at, window, tz),
             dose_interval(doses, str(order.get("orderId") or ""), at,
                           min_interval_hours(order, frequency, medication), name=name, tz=tz),
             daily_dose(medication, given_in_day(doses, at), amount, code=code)]
    return [c for c in found if c is not None]
