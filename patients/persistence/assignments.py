"""A ward's nurse assignments, one document per shift in the ward's partition
(``M_WARD_<ward>``, beside its bed holds and its event stream).

Loading a shift is one point read (two with the shift before it, for "same as last shift");
saving is one batch: the shift's document under the etag it was read at, and a
``NursesAssigned`` event naming the actor on the ward's stream, so the change is audited and
reaches the projections through the change feed like a patient's events.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import STREAM_DOC_TYPE, append_events
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.errors import DomainError
from patients.domain.events import NursesAssigned
from patients.domain.shifts import (
    Assignments,
    Shift,
    assignments_from_json,
    assignments_to_json,
)
from patients.persistence.beds import ward_pk

SHIFT_ASSIGNMENTS = "ShiftAssignments"


def doc_id(shift: Shift) -> str:
    return f"shift-{shift.name}"


@dataclass(frozen=True)
class ShiftSheet:
    """A shift's assignments as stored, with the version (ETag) they were read at (None:
    nothing stored yet) and when and by whom they were last set."""

    ward_id: str
    shift: Shift
    assignments: Assignments
    version: str | None = None
    updated_at: str | None = None
    updated_by: str | None = None


def _sheet(ward_id: str, shift: Shift, doc: Document | None) -> ShiftSheet:
    if doc is None:
        return ShiftSheet(ward_id, shift, {})
    c = doc["docContents"]
    return ShiftSheet(ward_id, shift, assignments_from_json(c.get("beds")), doc.get("_etag"),
                      c.get("updatedAt"), c.get("updatedByName"))


def read_sheet(store: DocumentStore, ward_id: str, shift: Shift) -> ShiftSheet:
    """The shift's assignments (one point read)."""
    return _sheet(ward_id, shift, store.try_read(ward_pk(ward_id), doc_id(shift)))


def ward_sheets(store: DocumentStore, ward_id: str) -> tuple[int, list[ShiftSheet]]:
    """Every shift's assignments the ward keeps and its stream's last sequence number, as
    of one consistent read (one query): what the views' shift rows are rebuilt from."""
    docs = store.query_all(ward_pk(ward_id), Query(where=(
        Cond("docType", "in", [SHIFT_ASSIGNMENTS, STREAM_DOC_TYPE]),)), page_size=1000)
    seq, sheets = 0, []
    for doc in docs:
        if doc["docType"] == STREAM_DOC_TYPE:
            seq = int(doc["docContents"]["seq"])
            continue
        try:
            shift = Shift.parse(str(doc["docContents"].get("shift")))
        except DomainError:
            continue  # not a shift this release can name: nobody's assignment
        sheets.append(_sheet(ward_id, shift, doc))
    return seq, sheets


def load(uow: UnitOfWork, ward_id: str, shift: Shift) -> ShiftSheet:
    """The shift's assignments through ``uow`` (tracked: :func:`save` replaces this very
    version)."""
    return _sheet(ward_id, shift, uow.try_get(ward_pk(ward_id), doc_id(shift)))


def save(uow: UnitOfWork, sheet: ShiftSheet, assignments: Assignments, *, actor: Actor,
         now: datetime) -> str:
    """Write ``assignments`` over ``sheet`` and append a ``NursesAssigned`` event, as one
    batch (StaleWrite when the shift changed since it was loaded); returns the new version."""
    pk = ward_pk(sheet.ward_id)
    doc = wrap(doc_id=doc_id(sheet.shift), pk=pk, doc_type=SHIFT_ASSIGNMENTS, contents={
        "wardId": sheet.ward_id, "shift": sheet.shift.name,
        "beds": assignments_to_json(assignments), "updatedAt": now.isoformat(),
        "updatedBy": actor.id, "updatedByName": actor.display_name or actor.username})
    if sheet.version is None:
        uow.add(doc)
    else:
        uow.update(doc)
    event = NursesAssigned(ward_id=sheet.ward_id, shift=sheet.shift.name,
                           assignments=assignments_to_json(assignments),
                           previous=assignments_to_json(sheet.assignments))
    append_events(uow, pk, [(event.event_type, event.payload())], actor=actor.as_dict(),
                  now=now)
    committed = uow.commit()
    return next(str(d["_etag"]) for d in committed if d["id"] == doc["id"])
