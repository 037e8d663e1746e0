"""Projection rules: a patient's current record → the view rows it contributes. Pure.

Why state-based: applying an event means "bring this patient's rows up to the record as of
sequence N". The rows are a pure function of a consistent single-partition snapshot (patient,
active admission, stream sequence), so duplicates are no-ops, reordering cannot corrupt, and a
gap repairs itself by construction: the newest snapshot already includes every earlier event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from patients.domain import fold

ADMITTED = "Admitted"


@dataclass(frozen=True)
class Snapshot:
    """What the views need of one patient, read in ONE single-partition query."""

    patient_id: str
    seq: int
    patient: dict[str, Any] | None
    admission: dict[str, Any] | None
    orders: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Row:
    view: str
    bucket: str
    row_id: str
    contents: dict[str, Any]
    query: dict[str, Any]  # top-level Query* fields the view partition indexes

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.view, self.bucket, self.row_id)


def age(birth: str, today: date) -> int | None:
    try:
        born = date.fromisoformat(birth)
    except (TypeError, ValueError):
        return None
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def admitted_row(snap: Snapshot) -> Row | None:
    p, a = snap.patient, snap.admission
    if p is None or a is None or a.get("status") != "active":
        return None
    name = f"{p['familyName'].upper()}, {p['givenName']}"
    contents = {
        "patientId": snap.patient_id, "mrn": p["mrn"], "name": name,
        "givenName": p["givenName"], "familyName": p["familyName"],
        "birthDate": p["birthDate"], "sex": p.get("sex", "unknown"),
        "departmentId": a["departmentId"], "wardId": a["wardId"], "bed": a.get("bed"),
        "admissionId": a["admissionId"], "admittedAt": a["startedAt"],
        "attendingName": a.get("attendingName", ""), "reason": a.get("reason", ""),
    }
    query = {
        "QueryWard": a["wardId"],
        "QueryName": fold(f"{p['familyName']} {p['givenName']}"),
        "QueryMrn": p["mrn"],
        "QueryAdmittedAt": a["startedAt"],
        "QueryBed": a.get("bed") or "",
    }
    return Row(ADMITTED, a["departmentId"], snap.patient_id, contents, query)


VIEWS = (admitted_row,)


def rows_for(snap: Snapshot) -> dict[tuple[str, str, str], Row]:
    """Every view row this patient should have, keyed by (view, bucket, row id)."""
    rows = (rule(snap) for rule in VIEWS)
    return {row.key: row for row in rows if row is not None}


def plan(snap: Snapshot, previous: list[tuple[str, str, str]]) -> tuple[list[Row], list[tuple[str, str, str]]]:
    """Rows to write and row keys to remove to move from ``previous`` to ``snap``."""
    wanted = rows_for(snap)
    removed = [key for key in previous if tuple(key) not in wanted]
    return list(wanted.values()), removed


def should_apply(event_seq: int, applied_seq: int) -> bool:
    """Duplicates and events already covered by a newer snapshot are skipped."""
    return event_seq > applied_seq


def length_of_stay(admitted_at: str, now: datetime) -> int:
    try:
        start = datetime.fromisoformat(admitted_at)
    except ValueError:
        return 0
    return max(0, (now - start).days)
