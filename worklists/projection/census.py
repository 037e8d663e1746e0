"""The midnight census, pure: a patient's ward stays, their view rows, and the ward's days.

A *stay* is the time one admission spent on one ward: it begins with the admission or a
transfer in, and ends with a transfer out or the discharge (``until`` None while it goes
on). A bed move within the ward is not a stay of its own. Stays are kept in the patient's
state (:func:`follow` folds the admission events into them, :func:`stays_of` builds them
from the record's admissions, and both give the same list), and each becomes view rows
(:func:`census_rows`): a stay still going on one row in the ward's ``open`` bucket, an
ended one a row in each calendar month (UTC) it overlaps. Rows depend on the state only,
never on the clock, so redelivery, rebuilds and checks compare like for like; the counts
per day are worked out at read time (:func:`census_days`).

When is a patient counted? At the midnight (in the hospital's time zone) that ends a day,
every stay that began before it and had not ended before it. So ``at midnight`` of a day
equals the day before's plus its arrivals minus its departures, on days of 23 or 25 hours
too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

from patients.domain.events import EventType
from patients.domain.records import Admission, AdmissionStatus
from worklists.projection.state import PatientState, Row

CENSUS = "Census"
OPEN_BUCKET = "open"
ADMISSION, TRANSFER, DISCHARGE = "admission", "transfer", "discharge"
STAY_EVENTS = frozenset({EventType.ADMISSION_STARTED, EventType.PATIENT_TRANSFERRED,
                         EventType.ADMISSION_ENDED})


class StaysUnclear(ValueError):
    """An admission event that does not fit the stays held: rebuild from the record."""


def _stay(admission_id: str, ward_id: str, since: str, arrived: str) -> dict[str, Any]:
    return {"admissionId": admission_id, "wardId": ward_id, "since": since, "until": None,
            "arrived": arrived, "left": None}


def _open_index(stays: Sequence[dict[str, Any]], admission_id: str | None) -> int:
    for i in range(len(stays) - 1, -1, -1):
        s = stays[i]
        if s["until"] is None and admission_id in (None, s["admissionId"]):
            return i
    raise StaysUnclear(f"no stay going on for admission {admission_id}")


def _closed(stay: dict[str, Any], until: str, left: str) -> dict[str, Any]:
    return {**stay, "until": until, "left": left}


def follow(stays: Sequence[dict[str, Any]], etype: str,
           data: dict[str, Any]) -> list[dict[str, Any]]:
    """The stays after event ``etype`` with contents ``data``; the same list for an event
    that moves nobody. :class:`StaysUnclear` when the event does not fit them."""
    stays = list(stays)
    if etype == EventType.ADMISSION_STARTED:
        if any(s["until"] is None for s in stays):
            raise StaysUnclear("an admission while another stay goes on")
        if not (data.get("admissionId") and data.get("wardId") and data.get("startedAt")):
            raise StaysUnclear("an admission without its id, ward or time")
        return [*stays, _stay(data["admissionId"], data["wardId"], data["startedAt"],
                              ADMISSION)]
    if etype == EventType.PATIENT_TRANSFERRED:
        i = _open_index(stays, data.get("admissionId"))
        ward = data.get("toWard", data.get("wardId"))
        if not ward or not data.get("at"):
            raise StaysUnclear("a transfer without its ward or time")
        if ward == stays[i]["wardId"]:
            return stays  # another bed on the same ward: the same stay
        stays[i] = _closed(stays[i], data["at"], TRANSFER)
        return [*stays, _stay(stays[i]["admissionId"], ward, data["at"], TRANSFER)]
    if etype == EventType.ADMISSION_ENDED:
        i = _open_index(stays, data.get("admissionId"))
        # An end without its time (never written so) closes the stay where it began rather
        # than leaving the patient in a bed for ever.
        stays[i] = _closed(stays[i], data.get("endedAt") or stays[i]["since"], DISCHARGE)
        return stays
    return stays


def stays_of(admissions: Iterable[Admission]) -> list[dict[str, Any]]:
    """The stays of the record's admissions, oldest first: what :func:`follow` gives for
    the events that made them."""
    stays: list[dict[str, Any]] = []
    for adm in sorted(admissions, key=lambda a: a.started_at):
        first_ward = adm.transfers[0].get("fromWard") if adm.transfers else adm.ward_id
        current = _stay(adm.admission_id, first_ward or adm.ward_id, adm.started_at, ADMISSION)
        for move in adm.transfers:
            ward = move.get("toWard")
            if not ward or ward == current["wardId"]:
                continue
            stays.append(_closed(current, move["at"], TRANSFER))
            current = _stay(adm.admission_id, ward, move["at"], TRANSFER)
        if adm.status != AdmissionStatus.ACTIVE:
            current = _closed(current, adm.ended_at or current["since"], DISCHARGE)
        stays.append(current)
    return stays


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"a stay's time without an offset: {text}")
    return moment.astimezone(UTC)


def _months(since: datetime, until: datetime) -> list[str]:
    months, year, month = [], since.year, since.month
    while (year, month) <= (until.year, until.month):
        months.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def month_buckets(ward_id: str, start: datetime, end: datetime) -> list[str]:
    """The buckets a read of ``ward_id`` between the instants ``start`` and ``end`` needs:
    each month (UTC) of that span, and the stays going on."""
    return [*(f"{ward_id}_{m}" for m in _months(start.astimezone(UTC), end.astimezone(UTC))),
            f"{ward_id}_{OPEN_BUCKET}"]


def census_rows(state: PatientState) -> list[Row]:
    """The patient's census rows: one per stay going on, in its ward's ``open`` bucket; one
    per month (UTC) an ended stay overlaps, in that ward-month's bucket."""
    rows: list[Row] = []
    count: dict[str, int] = {}
    for stay in state.stays:
        n = count[stay["admissionId"]] = count.get(stay["admissionId"], 0) + 1
        row_id = f"{state.patient_id}.{stay['admissionId']}.{n}"
        contents = {"patientId": state.patient_id, **stay}
        query = {"QuerySince": stay["since"]}
        if stay["until"] is None:
            rows.append(Row(CENSUS, f"{stay['wardId']}_{OPEN_BUCKET}", row_id, contents, query))
            continue
        for month in _months(_utc(stay["since"]), _utc(stay["until"])):
            rows.append(Row(CENSUS, f"{stay['wardId']}_{month}", row_id, contents, query))
    return rows


@dataclass(frozen=True)
class CensusDay:
    """One day of one ward: who was there at the midnight before and the one ending it, and
    who came and went in between (by admission, by transfer)."""

    day: date
    at_start: int | None  # None while the midnight that begins the day is still to come
    admissions: int
    transfers_in: int
    transfers_out: int
    discharges: int
    at_midnight: int | None  # None while the midnight that ends the day is still to come
    beds: int  # the ward's beds that day (at its midnight, or now for today)
    occupancy: float | None  # per cent of the beds at midnight; None without beds or yet

    @property
    def pending(self) -> bool:
        """The day's midnight has not come yet: no census for it (yet)."""
        return self.at_midnight is None

    def as_json(self) -> dict[str, Any]:
        return {"date": self.day.isoformat(), "at_start": self.at_start,
                "admissions": self.admissions, "transfers_in": self.transfers_in,
                "transfers_out": self.transfers_out, "discharges": self.discharges,
                "at_midnight": self.at_midnight, "beds": self.beds,
                "occupancy": self.occupancy}


def midnight(day: date, zone: tzinfo) -> datetime:
    """The instant a day begins in ``zone`` (its local midnight)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone)


def beds_by_day(versions: Sequence[Mapping[str, Any]], first: date, last: date,
                zone: tzinfo, now: datetime, current: int) -> dict[date, int]:
    """The ward's beds on each day ``first``…``last``: those of its reference entry at the
    midnight that ends the day (now, for today and later), from the entry's saved versions
    (``{at, entry, previous}``, oldest first, :func:`patients.persistence.reference.
    saved_versions` of one ward). Before the first save: the beds that save replaced (or
    added); with no saves at all: ``current``."""
    changes = sorted(((_utc(v["at"]), len((v.get("entry") or {}).get("beds") or ()),
                       None if v.get("previous") is None
                       else len(v["previous"].get("beds") or ()))
                      for v in versions if v.get("at")), key=lambda c: c[0])
    out = {}
    day = first
    while day <= last:
        moment = min(midnight(day + timedelta(days=1), zone), now)
        done = [after for at, after, _ in changes if at <= moment]
        if done:
            out[day] = done[-1]
        elif changes:
            _, after, before = changes[0]
            out[day] = after if before is None else before
        else:
            out[day] = current
        day += timedelta(days=1)
    return out


def census_days(stays: Iterable[dict[str, Any]], first: date, last: date, zone: tzinfo,
                beds: int | Mapping[date, int], *, now: datetime | None = None
                ) -> list[CensusDay]:
    """The ward's days from ``first`` to ``last`` (local dates in ``zone``) from its stays
    (each once; stays of other wards are the caller's mistake). ``beds``: the ward's beds,
    or its beds per day (a day not in it: none). ``now``: a midnight after it has no count
    yet (``at_start`` / ``at_midnight`` None); None counts every midnight."""
    span = (last - first).days + 1
    if span < 1:
        return []
    # Index 0 is the day before ``first``: its midnight is the first day's start.
    size = span + 1
    arrivals = {ADMISSION: [0] * size, TRANSFER: [0] * size}
    departures = {DISCHARGE: [0] * size, TRANSFER: [0] * size}
    change = [0] * (size + 1)  # difference array of "there at the midnight ending day i"
    origin = first - timedelta(days=1)

    def index(text: str) -> int:
        return (_utc(text).astimezone(zone).date() - origin).days

    for stay in stays:
        came = index(stay["since"])
        went = None if stay["until"] is None else index(stay["until"])
        if 0 <= came < size and stay["arrived"] in arrivals:
            arrivals[stay["arrived"]][came] += 1
        if went is not None and 0 <= went < size and stay["left"] in departures:
            departures[stay["left"]][went] += 1
        # There at the midnights ending days came … went - 1.
        start, stop = max(came, 0), size if went is None else min(went, size)
        if start < stop:
            change[start] += 1
            change[stop] -= 1
    there, running = [], 0
    for i in range(size):
        running += change[i]
        there.append(running)
    days = []
    for i in range(1, size):
        day = origin + timedelta(days=i)
        count = beds if isinstance(beds, int) else beds.get(day, 0)
        started = now is None or midnight(day, zone) <= now
        ended = now is None or midnight(day + timedelta(days=1), zone) <= now
        at_midnight = there[i] if ended else None
        occupancy = (round(100 * there[i] / count, 1)
                     if count > 0 and at_midnight is not None else None)
        days.append(CensusDay(
            day=day, at_start=there[i - 1] if started else None,
            admissions=arrivals[ADMISSION][i], transfers_in=arrivals[TRANSFER][i],
            transfers_out=departures[TRANSFER][i], discharges=departures[DISCHARGE][i],
            at_midnight=at_midnight, beds=count, occupancy=occupancy))
    return days
