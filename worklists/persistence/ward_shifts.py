"""A ward's shift rows (``ShiftBeds``, :func:`worklists.projection.rows.shift_row`): the
nurses by bed that My patients joins its rows with, projected from the ward's stream
(``NursesAssigned``) and rebuilt from the shifts' assignments the ward keeps.

Each event carries the whole shift after it, so a shift's row is what its latest event says.
A row is written only at a later sequence number of the ward's stream than the one it holds
(a rebuild writes at the stream's head as read with the shifts, in one query), so a
redelivered event, or one delivered after a later one, changes nothing: idempotent and in
order per ward without a tracker. A ward's rows are few, one per shift ever assigned.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from patients.domain.events import EventType
from patients.domain.shifts import assignments_to_json
from patients.persistence import assignments, reference
from patients.persistence.beds import ward_pk
from worklists.persistence import view_rows
from worklists.persistence.generations import live_generations
from worklists.projection.rows import SHIFT_BEDS, shift_row
from worklists.projection.state import Row, RowKey

WARD_STREAM = ward_pk("")  # the prefix of every ward's stream (beds, nurses)
MAX_ATTEMPTS = 8


class ShiftRowConflict(errors.StoreError):
    """A shift row kept changing under us; the task retries."""


def ward_of(stream_pk: str) -> str | None:
    """The ward whose stream ``stream_pk`` is (None: not a ward's)."""
    return stream_pk[len(WARD_STREAM):] if stream_pk.startswith(WARD_STREAM) else None


def wards(store: DocumentStore) -> list[str]:
    """Every ward of the reference data, retired ones too (their rows are checked, too)."""
    return sorted(reference.all_of(store, "Ward"))


def _write(store: DocumentStore, gen: int, row: Row, seq: int, *, repair: bool = False,
           known: view_rows.StoredRow | None | bool = False) -> bool:
    """Write ``row`` at ``seq`` unless the stored one is of a later sequence or already
    shows it (``repair``: rewrite it then too); True when written. ``known``: the stored
    row as just read (None: none), else it is read here."""
    for attempt in range(MAX_ATTEMPTS):
        existing = (view_rows.read_row(store, gen, row.key) if known is False or attempt
                    else known)
        if existing is not None and (existing.seq > seq or (
                existing.shows(row) and not repair)):
            return False
        try:
            view_rows.write_row(store, row, gen, seq, existing)
            return True
        except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
            continue  # written meanwhile: read it again
    raise ShiftRowConflict("a shift row did not settle")


def apply_events(store: DocumentStore, gen: int, ward_id: str,
                 events: Iterable[dict[str, Any]]) -> str:
    """Apply a ward's events (their contents) in generation ``gen``: applied, or duplicate
    when none changed a row (other events of the ward's stream change none)."""
    outcome = "duplicate"
    for event in events:
        if event.get("type") != EventType.NURSES_ASSIGNED:
            continue
        data = event.get("data") or {}
        if not data.get("shift"):
            continue  # no shift named: nobody's assignment
        row = shift_row(ward_id, str(data["shift"]), data.get("assignments") or {})
        if _write(store, gen, row, int(event["seq"])):
            outcome = "applied"
    return outcome


def source_rows(store: DocumentStore, ward_id: str) -> tuple[int, dict[RowKey, Row]]:
    """The ward's shift rows as its record says, and the stream's sequence they are of."""
    seq, sheets = assignments.ward_sheets(store, ward_id)
    rows = [shift_row(ward_id, s.shift.name, assignments_to_json(s.assignments))
            for s in sheets]
    return seq, {row.key: row for row in rows}


def rebuild_ward(store: DocumentStore, gen: int, ward_id: str, *, repair: bool = False
                 ) -> int:
    """Bring the ward's shift rows in ``gen`` up to its record (a rebuild, a repair, the
    catch-up beside a starting relay): rows missing or showing something else are written
    at the stream's head, rows of no shift deleted; returns how many rows changed. Two
    queries when nothing has to change."""
    seq, rows = source_rows(store, ward_id)
    stored = view_rows.bucket_rows(store, gen, SHIFT_BEDS, ward_id)
    changed = sum(_write(store, gen, row, seq, repair=repair, known=stored.get(key))
                  for key, row in rows.items())
    for key, existing in stored.items():
        if key not in rows and existing.seq <= seq:
            try:
                view_rows.delete_row(store, gen, key, etag=existing.etag)
                changed += 1
            except (errors.NotFound, errors.PreconditionFailed):
                pass  # gone, or a newer event wrote it: not ours to delete
    return changed


def catch_up(store: DocumentStore) -> int:
    """Every ward's shift rows in every live generation brought up to its record: what a
    store upgraded from a release without them needs (then nothing changes)."""
    return sum(rebuild_ward(store, gen, ward) for gen in live_generations(store)
               for ward in wards(store))


def check_ward(store: DocumentStore, gen: int, ward_id: str) -> list[str]:
    """What is wrong with the ward's shift rows in ``gen``: missing, stale and extra rows."""
    _, rows = source_rows(store, ward_id)
    problems = [f"{how} {SHIFT_BEDS} row {key[2]}"
                for how, key in view_rows.unlike(store, gen, rows)]
    problems += [f"extra {SHIFT_BEDS} row {key[2]}"
                 for key in view_rows.bucket_rows(store, gen, SHIFT_BEDS, ward_id)
                 if key not in rows]
    return problems


def drop_ward(store: DocumentStore, gen: int, ward_id: str) -> None:
    """Delete the ward's shift rows in ``gen`` (a retired generation)."""
    view_rows.delete_rows(store, gen, list(view_rows.bucket_rows(store, gen, SHIFT_BEDS,
                                                                 ward_id)))


def shift_beds(store: DocumentStore, gen: int, ward_id: str, shift: str
               ) -> dict[str, dict[str, str]]:
    """Bed → {nurseId, nurseName} of the ward's ``shift`` as projected (one point read;
    empty when nobody is assigned)."""
    row = view_rows.read_row(store, gen, (SHIFT_BEDS, ward_id, shift))
    return dict(row.contents.get("beds") or {}) if row is not None else {}
