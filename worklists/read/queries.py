"""Worklist reads: one partition each, served by a composite index, paged by continuation.

Every function answers from ONE view partition (or, for an exact MRN, a point read of the
MRN's holder and the patient's own partition), in the active generation.

Continuations in and out are page tokens (:mod:`hisadmin.core.tokens`): the store's token
signed for the worklist it pages (:meth:`Worklist.scope`), so a forged, altered or foreign
token is :class:`~hisadmin.core.tokens.BadPageToken` before the store reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from typing import Any

import orjson

from cosmos_backend import errors
from cosmos_backend.store import Cond, DocumentStore, Query
from hisadmin.core import tokens
from patients.domain import mar
from patients.persistence import mrn as mrns
from worklists.persistence.generations import active_generation
from worklists.persistence.source import read_source
from worklists.persistence.view_rows import count_rows, page_keyed_rows, page_rows
from worklists.projection.due import WITHIN, doses_due
from worklists.projection.rows import (
    ADMITTED,
    AT_RISK,
    BIRTHS,
    MEDS_DUE,
    MY_ORDERS,
    NAME_BUCKET_LEN,
    NAMES,
    OBS_DUE,
    ORDERS,
    REVIEWS,
    fold,
    name_bucket,
    rows_for,
)
from worklists.projection.schema import VIEW_SORTS

DEFAULT_PAGE = 50
MAX_PAGE = 200
MAX_DUE_ROWS = 2000  # a ward's scheduled orders; the list is computed whole, not paged
_MRNISH = re.compile(r"\d")


class SearchTooShort(errors.InvalidRequest):
    """A name prefix shorter than the name bucket would need a cross-partition query."""


@dataclass(frozen=True)
class Worklist:
    view: str
    bucket: str
    equals: dict[str, Any] = field(default_factory=dict)  # Query path → value
    prefix: tuple[str, str] | None = None  # (Query path, folded prefix)
    sort: str = ""
    descending: bool = False
    at_most: tuple[str, Any] | None = None  # (Query path, upper bound)
    at_least: tuple[str, Any] | None = None  # (Query path, lower bound)
    given_prefix: str | None = None  # Names: the folded given name starts with this

    def query(self) -> Query:
        sorts = VIEW_SORTS[self.view]
        sort = self.sort if self.sort in sorts else next(iter(sorts))
        path, reverse = sorts[sort]
        where = [Cond(p, "=", v) for p, v in sorted(self.equals.items()) if v not in ("", None)]
        if self.prefix is not None:
            where.append(Cond(self.prefix[0], "startswith", self.prefix[1]))
        if self.at_most is not None:
            where.append(Cond(self.at_most[0], "<=", self.at_most[1]))
        if self.at_least is not None:
            where.append(Cond(self.at_least[0], ">=", self.at_least[1]))
        if self.given_prefix:
            where.append(Cond("QueryGiven", "startswith", self.given_prefix))
        direction = "DESC" if self.descending != reverse else "ASC"
        return Query(where=tuple(where), order_by=((path, direction),))

    def scope(self) -> str:
        """What a page token of this worklist is bound to: the view, bucket, filters and
        order (everything but the page size)."""
        return "worklist:" + orjson.dumps({
            "view": self.view, "bucket": self.bucket,
            "equals": {k: v for k, v in self.equals.items() if v not in ("", None)},
            "prefix": self.prefix, "sort": self.sort, "descending": self.descending,
            "at_most": self.at_most, "at_least": self.at_least,
            "given": self.given_prefix or None}, option=orjson.OPT_SORT_KEYS).decode()


@dataclass
class Result:
    rows: list[dict[str, Any]]
    continuation: str | None
    generation: int
    truncated: bool = False  # merged readings: more rows exist than shown; refine the search
    total: int | None = None  # rows matching, all pages (when asked for)


def age(birth: str | None, today: date) -> int | None:
    try:
        born = date.fromisoformat(birth or "")
    except ValueError:
        return None
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def length_of_stay(admitted_at: str | None, now: datetime) -> int | None:
    try:
        start = datetime.fromisoformat(admitted_at or "")
    except ValueError:
        return None
    return max(0, (now - start).days)


def present(contents: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """A row as shown: stored contents plus what depends on today (age, length of stay)."""
    now = now or datetime.now(UTC)
    row = {**contents, "age": age(contents.get("birthDate"), now.date())}
    if "admittedAt" in contents:
        row["lengthOfStay"] = length_of_stay(contents["admittedAt"], now)
    return row


def run(store: DocumentStore, worklist: Worklist, *, page_size: int = DEFAULT_PAGE,
        continuation: str | None = None, total: bool = False) -> Result:
    """One page of one bucket; ``total``: also count the matching rows (one more query).
    ``continuation`` is a page token of this worklist (:class:`tokens.BadPageToken` if
    not), as is the answer's."""
    scope = worklist.scope()
    after = tokens.open_page(continuation, scope=scope)
    gen = active_generation(store)
    rows, token = page_rows(store, gen, worklist.view, worklist.bucket, worklist.query(),
                            page_size=max(1, min(page_size, MAX_PAGE)),
                            continuation=after)
    now = datetime.now(UTC)
    count = count_rows(store, gen, worklist.view, worklist.bucket, worklist.query()) \
        if total else None
    return Result([present(row, now) for row in rows], tokens.sign_page(token, scope=scope),
                  gen, total=count)


def _merge_key(query: Query) -> Any:
    path, direction = query.order_by[0]

    def key(item: tuple[dict[str, Any], dict[str, Any]]) -> tuple[Any, ...]:
        value = item[1].get(path)
        # missing first, then numbers, then text, as the stores order mixed types
        rank = 0 if value is None else 1 if isinstance(value, int | float) else 2
        return (rank, value if value is not None else 0, item[1]["id"])

    return key, direction == "DESC"


def run_across(store: DocumentStore, worklists: list[Worklist], *,
               page_size: int = DEFAULT_PAGE, continuation: str | None = None,
               total: bool = False) -> Result:
    """One page of the same worklist over several buckets (every department), merged in
    the worklist's order: one query per bucket. The continuation is the offset into the
    merged list, so page n reads n pages' worth from each bucket; the buckets are bounded
    (a department's census or active orders), and the page says how many there are. The
    offset travels as a page token bound to every bucket's worklist."""
    if not worklists:
        return Result([], None, active_generation(store), total=0 if total else None)
    scope = "across:" + "|".join(w.scope() for w in worklists)
    opened = tokens.open_page(continuation, scope=scope)
    offset = int(opened) if opened and opened.isdigit() else 0
    if opened and not opened.isdigit():  # signed here, so never: a change of format
        raise tokens.BadPageToken("the continuation token is not valid")
    page_size = max(1, min(page_size, MAX_PAGE))
    gen = active_generation(store)
    wanted = offset + page_size + 1
    items: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for w in worklists:
        query, token, taken = w.query(), None, 0
        while taken < wanted:
            rows, token = page_keyed_rows(store, gen, w.view, w.bucket, query,
                                          page_size=min(MAX_PAGE, wanted - taken),
                                          continuation=token)
            items.extend(rows)
            taken += len(rows)
            if not token:
                break
    key, reverse = _merge_key(worklists[0].query())
    items.sort(key=key, reverse=reverse)
    page = items[offset:offset + page_size]
    more = len(items) > offset + page_size
    now = datetime.now(UTC)
    count = sum(count_rows(store, gen, w.view, w.bucket, w.query()) for w in worklists) \
        if total else None
    return Result([present(contents, now) for contents, _ in page],
                  tokens.sign_page(str(offset + page_size), scope=scope) if more else None,
                  gen, total=count)


# ------------------------------------------------------------------------------ worklists
def admitted(department: str, *, ward: str = "", q: str = "", sort: str = "bed",
             descending: bool = False) -> Worklist:
    """The census of a department; ``q`` is a name prefix, or an MRN if it has a digit."""
    equals: dict[str, Any] = {"QueryWard": ward}
    prefix = None
    if q.strip() and _MRNISH.search(q):
        equals["QueryMrn"] = q.strip().upper()
    elif q.strip():
        prefix = ("QueryName", fold(q))
    return Worklist(ADMITTED, department, equals, prefix, sort, descending)


def orders(department: str, *, kind: str = "", status: str = "", urgency: str = "",
           assignee: str = "", sort: str = "placed", descending: bool = False) -> Worklist:
    return Worklist(ORDERS, department, {"QueryKind": kind, "QueryStatus": status,
                                         "QueryUrgency": urgency, "QueryAssignee": assignee},
                    None, sort, descending)


def my_orders(user_id: str, *, kind: str = "", status: str = "", urgency: str = "",
              department: str = "", sort: str = "placed", descending: bool = False) -> Worklist:
    return Worklist(MY_ORDERS, str(user_id), {
        "QueryKind": kind, "QueryStatus": status, "QueryUrgency": urgency,
        "QueryDepartment": department}, None, sort, descending)


MAX_BIRTH_YEARS = 10  # a birth-date search reads one partition per year it spans


def born_between(first: str, last: str, *, sort: str = "name") -> list[Worklist]:
    """Patients born from ``first`` to ``last`` (ISO dates, inclusive): one Births partition
    per year; :class:`SearchTooShort` when the range spans more than ten years."""
    try:
        start, end = date.fromisoformat(first), date.fromisoformat(last)
    except ValueError:
        raise errors.InvalidRequest("birth dates must be YYYY-MM-DD") from None
    if end.year - start.year + 1 > MAX_BIRTH_YEARS:
        raise SearchTooShort(f"A birth-date range may span at most {MAX_BIRTH_YEARS} years.")
    return [Worklist(BIRTHS, f"{year:04d}", sort=sort, at_least=("QueryBirth", first),
                     at_most=("QueryBirth", last))
            for year in range(start.year, end.year + 1)]


def results_to_review(user_id: str, *, kind: str = "", abnormal: bool = False,
                      sort: str = "resulted", descending: bool = False) -> Worklist:
    """Results of the orders ``user_id`` placed that nobody has acknowledged yet."""
    return Worklist(REVIEWS, str(user_id), {"QueryKind": kind,
                                            "QueryAbnormal": 1 if abnormal else None},
                    None, sort, descending)


def _whole_bucket(store: DocumentStore, gen: int, worklist: Worklist) -> list[dict[str, Any]]:
    """Every row of the worklist's bucket (up to :data:`MAX_DUE_ROWS`), a page at a time:
    lists worked out whole on the clock, which a ward's beds bound."""
    rows: list[dict[str, Any]] = []
    token: str | None = None
    while len(rows) < MAX_DUE_ROWS:
        page, token = page_rows(store, gen, worklist.view, worklist.bucket, worklist.query(),
                                page_size=MAX_PAGE, continuation=token)
        rows.extend(page)
        if not token:
            break
    return rows


def medications_due(store: DocumentStore, ward: str, *, tz: tzinfo = UTC,
                    now: datetime | None = None) -> Result:
    """The ward's dose times open now or within the next hour (late ones of earlier today
    included), soonest first: one query of the ward's partition for the orders whose first
    open dose time is before the horizon, then each order's open times on the clock."""
    now = now or datetime.now(UTC)
    worklist = Worklist(MEDS_DUE, ward, sort="due",
                        at_most=("QueryNextDue", mar.instant_text(now + WITHIN)))
    gen = active_generation(store)
    rows = _whole_bucket(store, gen, worklist)
    doses = [d for row in rows for d in doses_due(row, now, tz)]
    doses.sort(key=lambda d: (d["scheduledFor"], d.get("bed") or "", d["orderId"]))
    return Result([present(d, now) for d in doses], None, gen, total=len(doses))


def observations_due(store: DocumentStore, ward: str, *,
                     now: datetime | None = None) -> Result:
    """Every admitted patient of the ward by when their next set is due, overdue ones first
    (``overdue``, ``minutesLate``, worked out on the clock): the ward's partition whole, in
    the order of its index (the ward's beds bound it)."""
    now = now or datetime.now(UTC)
    worklist = Worklist(OBS_DUE, ward, sort="due")
    gen = active_generation(store)
    out = []
    for row in _whole_bucket(store, gen, worklist):
        late = (now - mar.parse_instant(row["nextDueAt"])).total_seconds() // 60
        out.append({**present(row, now), "overdue": late > 0, "minutesLate": max(0, int(late))})
    return Result(out, None, gen, total=len(out))


def at_risk(department: str, *, ward: str = "", sort: str = "score",
            descending: bool = False) -> Worklist:
    """A department's patients whose latest score is low-medium (a single 3), medium or
    high: the highest score first by default."""
    return Worklist(AT_RISK, department, {"QueryWard": ward}, None, sort, descending)


def by_name(q: str, *, sort: str = "name", descending: bool = False) -> Worklist:
    """Family name prefix (and given name prefix after it): "SMI", "Smith Jo"."""
    folded = fold(q)
    if len(folded) < NAME_BUCKET_LEN:
        raise SearchTooShort(f"Type at least {NAME_BUCKET_LEN} letters of the family name.")
    return Worklist(NAMES, name_bucket(folded), {}, ("QueryName", folded), sort, descending)


def _family_given(family: str, given: str, sort: str, descending: bool) -> Worklist | None:
    family, given = fold(family), fold(given)
    if len(family) < NAME_BUCKET_LEN:
        return None
    return Worklist(NAMES, name_bucket(family), {}, ("QueryName", family), sort, descending,
                    given_prefix=given or None)


def name_searches(q: str, *, sort: str = "name", descending: bool = False) -> list[Worklist]:
    """The readings of a typed name, each one partition of the Names view:

    - "FAMILY, Given" (either part partial): family prefix, given name prefix;
    - one word: a family name prefix;
    - several words: the family name first ("Smith Jo", "van der Berg"), and also the given
      name(s) first with the last word as the family prefix ("John Smi").
    Raises :class:`SearchTooShort` when no reading has two letters of a family name."""
    text = " ".join(q.split())
    readings: list[Worklist | None] = []
    if "," in text:
        family, given = text.split(",", 1)
        readings.append(_family_given(family, given, sort, descending))
    else:
        readings.append(_family_given(text, "", sort, descending))
        words = text.split(" ")
        if len(words) > 1:
            readings.append(_family_given(words[-1], " ".join(words[:-1]), sort, descending))
    found = [r for r in readings if r is not None]
    if not found:
        raise SearchTooShort(f"Type at least {NAME_BUCKET_LEN} letters of the family name.")
    return found


def run_searches(store: DocumentStore, searches: list[Worklist], *,
                 page_size: int = DEFAULT_PAGE, continuation: str | None = None) -> Result:
    """One reading pages by continuation; several are merged (by name, then id) into one
    page of up to ``page_size`` rows per reading, without a next page."""
    if len(searches) == 1:
        return run(store, searches[0], page_size=page_size, continuation=continuation)
    results = [run(store, w, page_size=page_size) for w in searches]
    merged = {r["patientId"]: r for result in results for r in result.rows}
    rows = sorted(merged.values(), key=lambda r: (fold(r.get("name") or ""), r["patientId"]),
                  reverse=searches[0].descending)
    more = any(result.continuation for result in results)
    return Result(rows, None, results[0].generation, truncated=more)


def by_mrn(store: DocumentStore, mrn: str) -> list[dict[str, Any]]:
    """Exact MRN: a point read of the reservation, then the patient's own partition."""
    patient_id = mrns.lookup(store, mrn.strip().upper())
    if patient_id is None:
        return []
    rows = [r for r in rows_for(read_source(store, patient_id)).values() if r.view == NAMES]
    return [present(r.contents) for r in rows]
