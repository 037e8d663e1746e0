"""Worklist reads: one partition each, served by a composite index, paged by continuation.

Every function answers from ONE view partition (or, for an exact MRN, a point read of the
MRN's holder and the patient's own partition), in the active generation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import Cond, DocumentStore, Query
from patients.domain import mar
from patients.persistence import mrn as mrns
from worklists.persistence.generations import active_generation
from worklists.persistence.source import read_source
from worklists.persistence.view_rows import page_rows
from worklists.projection.due import WITHIN, doses_due
from worklists.projection.rows import (
    ADMITTED,
    MEDS_DUE,
    MY_ORDERS,
    NAME_BUCKET_LEN,
    NAMES,
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

    def query(self) -> Query:
        sorts = VIEW_SORTS[self.view]
        sort = self.sort if self.sort in sorts else next(iter(sorts))
        path, reverse = sorts[sort]
        where = [Cond(p, "=", v) for p, v in sorted(self.equals.items()) if v not in ("", None)]
        if self.prefix is not None:
            where.append(Cond(self.prefix[0], "startswith", self.prefix[1]))
        if self.at_most is not None:
            where.append(Cond(self.at_most[0], "<=", self.at_most[1]))
        direction = "DESC" if self.descending != reverse else "ASC"
        return Query(where=tuple(where), order_by=((path, direction),))


@dataclass
class Result:
    rows: list[dict[str, Any]]
    continuation: str | None
    generation: int


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
        continuation: str | None = None) -> Result:
    gen = active_generation(store)
    rows, token = page_rows(store, gen, worklist.view, worklist.bucket, worklist.query(),
                            page_size=max(1, min(page_size, MAX_PAGE)),
                            continuation=continuation)
    now = datetime.now(UTC)
    return Result([present(row, now) for row in rows], token, gen)


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


def results_to_review(user_id: str, *, kind: str = "", abnormal: bool = False,
                      sort: str = "resulted", descending: bool = False) -> Worklist:
    """Results of the orders ``user_id`` placed that nobody has acknowledged yet."""
    return Worklist(REVIEWS, str(user_id), {"QueryKind": kind,
                                            "QueryAbnormal": 1 if abnormal else None},
                    None, sort, descending)


def medications_due(store: DocumentStore, ward: str, *, tz: tzinfo = UTC,
                    now: datetime | None = None) -> Result:
    """The ward's dose times open now or within the next hour (late ones of earlier today
    included), soonest first: one query of the ward's partition for the orders whose first
    open dose time is before the horizon, then each order's open times on the clock."""
    now = now or datetime.now(UTC)
    worklist = Worklist(MEDS_DUE, ward, sort="due",
                        at_most=("QueryNextDue", mar.instant_text(now + WITHIN)))
    gen = active_generation(store)
    rows: list[dict[str, Any]] = []
    token: str | None = None
    while len(rows) < MAX_DUE_ROWS:
        page, token = page_rows(store, gen, MEDS_DUE, ward, worklist.query(),
                                page_size=MAX_PAGE, continuation=token)
        rows.extend(page)
        if not token:
            break
    doses = [d for row in rows for d in doses_due(row, now, tz)]
    doses.sort(key=lambda d: (d["scheduledFor"], d.get("bed") or "", d["orderId"]))
    return Result([present(d, now) for d in doses], None, gen)


def by_name(q: str, *, sort: str = "name", descending: bool = False) -> Worklist:
    folded = fold(q)
    if len(folded) < NAME_BUCKET_LEN:
        raise SearchTooShort(f"Type at least {NAME_BUCKET_LEN} letters of the family name.")
    return Worklist(NAMES, name_bucket(folded), {}, ("QueryName", folded), sort, descending)


def by_mrn(store: DocumentStore, mrn: str) -> list[dict[str, Any]]:
    """Exact MRN: a point read of the reservation, then the patient's own partition."""
    patient_id = mrns.lookup(store, mrn.strip().upper())
    if patient_id is None:
        return []
    rows = [r for r in rows_for(read_source(store, patient_id)).values() if r.view == NAMES]
    return [present(r.contents) for r in rows]
