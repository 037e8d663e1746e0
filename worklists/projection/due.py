"""Which dose times of a "Medications due" row are open near ``now``, pure.

A row holds a scheduled medication order's course and the dose times already answered
(:func:`worklists.projection.rows.medication_rows`); its status on the clock is worked out
when it is read, with the MAR's own rules (:mod:`patients.domain.mar`), so the list and the
patient's MAR never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, tzinfo
from typing import Any

from patients.domain import mar

WITHIN = timedelta(hours=1)  # the list shows what is open now and what falls due within this
LISTED = ("due", "late", "upcoming")  # upcoming only when its time is within WITHIN


def doses_due(row: Mapping[str, Any], now: datetime, tz: tzinfo,
              within: timedelta = WITHIN) -> list[dict[str, Any]]:
    """The row's open dose times of today (in ``tz``, the hospital's time zone) up to
    ``now + within``: late ones of earlier today, due ones, and upcoming ones within the
    window, each with its status and ``slotId`` (the MAR's name for it)."""
    horizon = now + within
    today = mar.Day(now.astimezone(tz).date(), tz)
    days = [today]
    if horizon >= today.end:  # the window crosses midnight
        days.append(mar.Day(today.day + timedelta(days=1), tz))
    recorded = {mar.slot_key(mar.parse_instant(r)) for r in row.get("recorded") or ()}
    order = {**row, "kind": "medication", "asNeeded": False}
    hours = row.get("frequencyHours") or 0
    doses = []
    for day in days:
        for moment in mar.slot_times(order, hours, day):
            if moment > horizon:
                break
            if mar.slot_key(moment) in recorded:
                continue
            status = mar.slot_status(moment, None, now, day.end)
            if status in LISTED:
                doses.append({**row, "scheduledFor": mar.instant_text(moment),
                              "slotId": mar.slot_id(str(row.get("orderId") or ""), moment),
                              "doseStatus": status})
    return doses
