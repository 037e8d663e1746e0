"""The midnight census of a ward over a span of days: its stays read, its days counted.

A read names the ward-month partitions the span touches (UTC months, at most 14 for a
year) and the ward's stays going on (:func:`worklists.projection.census.month_buckets`),
each read whole: a ward-month holds the stays of a month on a ward (a few hundred), the
``open`` bucket one per occupied bed. A stay that spans months is in each of them and is
counted once. The counting is :func:`worklists.projection.census.census_days`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

from cosmos_backend.store import DocumentStore, Query
from hisadmin.core.inputs import read_date
from patients.persistence import reference
from worklists.persistence.generations import active_generation
from worklists.persistence.view_rows import page_rows
from worklists.projection.census import (
    CENSUS,
    CensusDay,
    beds_by_day,
    census_days,
    midnight,
    month_buckets,
)

MAX_DAYS = 366  # a year (a leap one too): at most 14 month partitions and the open one
DEFAULT_DAYS = 28  # four weeks up to today when no span is asked for
PAGE = 500


class BadSpan(ValueError):
    """A span of days that is empty, reversed or longer than :data:`MAX_DAYS`."""


@dataclass(frozen=True)
class Census:
    ward_id: str
    first: date
    last: date
    days: list[CensusDay]
    generation: int


def check_span(first: date, last: date) -> None:
    """:class:`BadSpan` (with the words to show) unless ``first``…``last`` is 1 to
    :data:`MAX_DAYS` days."""
    if last < first:
        raise BadSpan("The last day comes before the first; swap them.")
    if (last - first).days + 1 > MAX_DAYS:
        raise BadSpan(f"Choose at most {MAX_DAYS} days.")


def read_span(first: str, last: str, today: date) -> tuple[date, date]:
    """The span asked for as ``YYYY-MM-DD`` text (either left empty: the last
    :data:`DEFAULT_DAYS` days up to ``today``, or that many from ``first``); :class:`BadSpan`
    with the words to show for text that is no date or a span :func:`check_span` refuses."""
    try:
        end = read_date(last) if last else None
        start = read_date(first) if first else None
    except ValueError as exc:
        raise BadSpan(str(exc)) from None
    if start is None:
        end = end or today
        start = end - timedelta(days=DEFAULT_DAYS - 1)
    elif end is None:
        end = start + timedelta(days=DEFAULT_DAYS - 1)
    check_span(start, end)
    return start, end


def _stays(store: DocumentStore, gen: int, buckets: list[str]) -> list[dict[str, Any]]:
    stays: dict[str, dict[str, Any]] = {}
    for bucket in buckets:
        token: str | None = None
        while True:
            rows, token = page_rows(store, gen, CENSUS, bucket, Query(), page_size=PAGE,
                                    continuation=token)
            for row in rows:
                key = f"{row['patientId']}.{row['admissionId']}.{row['since']}"
                stays[key] = row
            if not token:
                break
    return list(stays.values())


def ward_census(store: DocumentStore, ward_id: str, first: date, last: date, *,
                zone: tzinfo, beds: int, now: datetime | None = None,
                versions: list[dict[str, Any]] | None = None) -> Census:
    """The ward's days ``first``…``last`` (local dates in ``zone``) on the clock ``now``
    (default now: a midnight still to come has no count); ``beds``: the ward's beds in
    reference data today, each day's own from ``versions`` (the Ward entries' saves, read
    once when not given). :class:`BadSpan` for a span too long."""
    check_span(first, last)
    now = now or datetime.now(UTC)
    gen = active_generation(store)
    # From the midnight that begins the day before (its census is the first day's start).
    start = midnight(first - timedelta(days=1), zone)
    end = midnight(last + timedelta(days=1), zone)
    stays = _stays(store, gen, month_buckets(ward_id, start, end))
    if versions is None:
        versions = reference.saved_versions(store, "Ward")
    per_day = beds_by_day([v for v in versions if v["code"] == ward_id], first, last, zone,
                          now, beds)
    return Census(ward_id, first, last,
                  census_days(stays, first, last, zone, per_day, now=now), gen)
