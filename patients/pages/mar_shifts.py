"""The MAR by the ward's shifts: the day's dose-time columns cut at the day shift's hours
(the patient's ward's, from reference data; ``settings.WARD_DAY_SHIFT``, local
"HH:MM-HH:MM", default 07:30-19:30, when the patient is not admitted; the night shift is the
rest), the shift on now first when the page shows today.

A calendar day holds three parts of shifts: the end of the night that began the evening
before, the day shift, and the start of the night that runs into the next day. Each is shown
as its own grid, with every scheduled order (a dash where it has no dose time in the part).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from hisadmin.core.inputs import hospital_time_zone
from hisadmin.core.store import get_store
from patients.domain.shifts import ShiftHours
from patients.persistence import reference

DEFAULT_DAY_SHIFT = "07:30-19:30"


@dataclass(frozen=True)
class Part:
    """One shift's part of a calendar day: columns from ``start`` (HH:MM, included) to
    ``end`` (excluded; "24:00" for midnight)."""

    key: str
    label: str
    start: str
    end: str
    hours: str


def day_shift(text: str | None = None) -> tuple[str, str]:
    """The day shift's start and end, "HH:MM" each, from ``text`` (default the setting);
    ImproperlyConfigured when it is not two times of day with the start first."""
    value = (text or getattr(settings, "WARD_DAY_SHIFT", "") or DEFAULT_DAY_SHIFT).strip()
    try:
        start, end = (time.fromisoformat(p.strip()) for p in value.replace("–", "-").split("-"))
    except ValueError:
        raise ImproperlyConfigured(
            f"WARD_DAY_SHIFT={value!r}: write the day shift's hours as HH:MM-HH:MM, such as "
            f"{DEFAULT_DAY_SHIFT}.") from None
    if not start < end:
        raise ImproperlyConfigured(f"WARD_DAY_SHIFT={value!r}: the day shift starts before "
                                   "it ends, within one day.")
    return start.strftime("%H:%M"), end.strftime("%H:%M")


def parts(shift: tuple[str, str]) -> list[Part]:
    """The day's three parts in clock order, for a day shift ``(start, end)``."""
    start, end = shift
    return [Part("night-before", "Night shift (from the evening before)", "00:00", start,
                 f"until {start}"),
            Part("day", "Day shift", start, end, f"{start}–{end}"),
            Part("night", "Night shift", end, "24:00", f"from {end}, into the next day")]


def by_shift(columns: Sequence[str], rows: Sequence[dict[str, Any]], *, day: date,
             now: datetime, shift: tuple[str, str]) -> list[dict[str, Any]]:
    """The grid cut into the day's shift parts: each ``{key, label, hours, current,
    columns, rows}`` with the rows' ``cells`` narrowed to the part's columns. When ``day``
    is ``now``'s date (``now`` in the hospital's time), the part on now comes first, then the
    later ones, then the earlier ones; on another day, clock order. A part with no dose
    time is kept (its ``columns`` empty), so the shift on now is always shown."""
    clock = now.strftime("%H:%M")
    today = now.date() == day
    out = []
    for part in parts(shift):
        keep = [i for i, c in enumerate(columns) if part.start <= c < part.end]
        out.append({
            "key": part.key, "label": part.label, "hours": part.hours,
            "current": today and part.start <= clock < part.end, "past": today and
            part.end <= clock, "columns": [columns[i] for i in keep],
            "rows": [{**row, "cells": [row["cells"][i] for i in keep]} for row in rows]})
    if today:
        current = next(i for i, p in enumerate(out) if p["current"])
        out = out[current:] + out[:current]
    return out


def local_now() -> datetime:
    """Now on the hospital's clock (a test fixes it here)."""
    return timezone.now().astimezone(hospital_time_zone())


def ward_shift(admission: Mapping[str, Any] | None) -> tuple[str, str]:
    """The day shift of the ward the patient is on ("HH:MM" start and end, from the ward's
    reference entry: ``dayShiftStart`` to ``nightShiftStart``); the setting's when the
    patient is not admitted or the ward is not in reference data."""
    ward_id = (admission or {}).get("wardId")
    ward = reference.all_of(get_store(), "Ward").get(ward_id) if ward_id else None
    if not ward:
        return day_shift()
    hours = ShiftHours.of_ward(ward)
    return f"{hours.day_start:%H:%M}", f"{hours.night_start:%H:%M}"


def context(columns: Sequence[str], rows: Sequence[dict[str, Any]], day: date,
            admission: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the MAR templates need for the shifts: ``shifts`` and the ``day_shift`` hours
    (the ward's of the patient's ``admission``, see :func:`ward_shift`)."""
    shift = ward_shift(admission)
    return {"shifts": by_shift(columns, rows, day=day, now=local_now(), shift=shift),
            "day_shift": shift}
