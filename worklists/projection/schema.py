"""The views' query shapes: sorts, indexed filters and the composite index of each.

Where rows are stored (``V_<View>_g<gen>_<bucket>``, or a ward's ``V_Ward_g<gen>_<ward>``), and the partitions of trackers, the
generation pointer and dead letters, is :mod:`worklists.persistence`'s business.
"""

from __future__ import annotations

from worklists.projection.rows import (
    ADMITTED,
    AT_RISK,
    BIRTHS,
    MEDS_DUE,
    MY_ORDERS,
    MY_PATIENTS,
    NAMES,
    OBS_DUE,
    ORDERS,
    REVIEWS,
)

# Sort keys per worklist: URL name → (indexed path, reversed?). "age" sorts by birth date
# the other way round; "stay" by admission time the other way round.
ADMITTED_SORTS: dict[str, tuple[str, bool]] = {
    "mrn": ("QueryMrn", False), "name": ("QueryName", False), "age": ("QueryBirth", True),
    "sex": ("QuerySex", False), "bed": ("QueryBed", False),
    "admitted": ("QueryAdmittedAt", False), "attending": ("QueryAttending", False),
    "stay": ("QueryAdmittedAt", True),
}
ORDER_SORTS: dict[str, tuple[str, bool]] = {
    "placed": ("QueryPlacedAt", False), "urgency": ("QueryUrgency", True),
    "status": ("QueryStatus", False), "kind": ("QueryKind", False),
    "name": ("QueryName", False), "mrn": ("QueryMrn", False), "bed": ("QueryBed", False),
    "assignee": ("QueryAssigneeName", False),
}
SEARCH_SORTS: dict[str, tuple[str, bool]] = {
    "name": ("QueryName", False), "mrn": ("QueryMrn", False), "age": ("QueryBirth", True),
    "sex": ("QuerySex", False),
}
MEDS_DUE_SORTS: dict[str, tuple[str, bool]] = {"due": ("QueryNextDue", False)}
OBS_DUE_SORTS: dict[str, tuple[str, bool]] = {"due": ("QueryNextDue", False)}
AT_RISK_SORTS: dict[str, tuple[str, bool]] = {
    "score": ("QueryScore", True), "taken": ("QueryTakenAt", True), "bed": ("QueryBed", False)}
MY_PATIENTS_SORTS: dict[str, tuple[str, bool]] = {"bed": ("QueryBed", False)}
REVIEW_SORTS: dict[str, tuple[str, bool]] = {
    "resulted": ("QueryResultedAt", True), "abnormal": ("QueryAbnormal", True),
    "name": ("QueryName", False), "mrn": ("QueryMrn", False), "bed": ("QueryBed", False),
}
# Equality filters answered through a composite (filter, sort, id) index for the common
# sorts; any other filter is a residual test within the bucket, which is bounded
# (docs/worklists.md). Few on purpose: every index costs on every write.
INDEXED_FILTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    ADMITTED: ("QueryWard", ("QueryBed", "QueryName", "QueryAdmittedAt")),
    ORDERS: ("QueryStatus", ("QueryPlacedAt", "QueryUrgency")),
}
VIEW_SORTS = {ADMITTED: ADMITTED_SORTS, ORDERS: ORDER_SORTS, MY_ORDERS: ORDER_SORTS,
              NAMES: SEARCH_SORTS, MEDS_DUE: MEDS_DUE_SORTS, REVIEWS: REVIEW_SORTS,
              BIRTHS: SEARCH_SORTS, MY_PATIENTS: MY_PATIENTS_SORTS, OBS_DUE: OBS_DUE_SORTS,
              AT_RISK: AT_RISK_SORTS}

A = "ascending"


def _composite(*paths: tuple[str, str]) -> list[dict[str, str]]:
    return [{"path": f"/{p}", "order": o} for p, o in paths]


def _composites() -> list[list[dict[str, str]]]:
    """Cosmos needs a composite index for every multi-key ORDER BY we send: (sort, id)."""
    shapes: list[list[dict[str, str]]] = []
    seen: set[str] = set()

    def add(shape: list[dict[str, str]]) -> None:
        key = repr(shape)
        if key not in seen:
            seen.add(key)
            shapes.append(shape)

    # Ascending only: a descending sort is ORDER BY path DESC, id DESC (the tie-break
    # follows the last key), which both Cosmos DB and SQLite read from the ascending index
    # backwards. Every index costs on every view-row write.
    for sorts in VIEW_SORTS.values():
        for path, _ in sorts.values():
            add(_composite((path, A), ("id", A)))
    for filt, paths in INDEXED_FILTERS.values():
        for path in paths:
            add(_composite((filt, A), (path, A), ("id", A)))
    return shapes


COMPOSITE_INDEXES: list[list[dict[str, str]]] = _composites()
