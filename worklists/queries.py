"""Worklist reads: single-partition, index-served, paged by continuation token."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from cosmos_backend.store import Cond, DocumentStore, Query
from patients.domain import fold

from .projections import ADMITTED, age, length_of_stay
from .schema import SORTS, view_pk

DEFAULT_PAGE = 50


@dataclass(frozen=True)
class AdmittedFilter:
    department_id: str
    ward_id: str = ""
    name: str = ""  # prefix, case- and accent-insensitive
    sort: str = "bed"
    descending: bool = False


def _sort_path(sort: str) -> str:
    return SORTS.get(sort, SORTS["bed"]).lstrip("/")


def admitted(store: DocumentStore, f: AdmittedFilter, *, page_size: int = DEFAULT_PAGE,
             continuation: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
    where: list[Cond] = []
    if f.ward_id:
        where.append(Cond("QueryWard", "=", f.ward_id))
    if f.name.strip():
        where.append(Cond("QueryName", "startswith", fold(f.name)))
        sort = "name"  # a name prefix is served by the name index, in name order
    else:
        sort = f.sort if f.sort in SORTS else "bed"
    query = Query(where=tuple(where),
                  order_by=((_sort_path(sort), "DESC" if f.descending else "ASC"),))
    page = store.query(view_pk(ADMITTED, f.department_id), query, page_size=page_size,
                       continuation=continuation)
    now = datetime.now(UTC)
    today = date.today()
    rows = []
    for doc in page.items:
        c = doc["docContents"]
        rows.append({**c, "age": age(c["birthDate"], today),
                     "admittedOn": datetime.fromisoformat(c["admittedAt"]),
                     "lengthOfStay": length_of_stay(c["admittedAt"], now)})
    return rows, page.continuation
