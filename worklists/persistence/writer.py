"""Writes a patient's view rows and tracker from the pure projection rules, version-guarded.

Per generation, a patient's tracker holds the folded state and the rows it owns. An event is
applied when it is the tracker's next sequence number; older ones are duplicates; a gap (or an
event the fold cannot trust) rebuilds the state from the patient's record. Rows are written
first, each guarded by the sequence it was computed at (never replaced by an older one); the
tracker is written last under its etag. A crash in between is repaired when the event is
redelivered; a concurrent writer makes us rebuild from source, including every row we
touched, so both converge on the newest record.
"""

from __future__ import annotations

from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import MAX_BATCH_OPERATIONS, DocumentStore
from worklists.persistence import failpoints, view_rows
from worklists.persistence.source import read_source
from worklists.persistence.trackers import read_tracker, save_tracker
from worklists.persistence.view_rows import view_pk
from worklists.projection.rows import rows_for
from worklists.projection.rules import diff, step
from worklists.projection.state import PatientState, Row, RowKey

MAX_ATTEMPTS = 8


class ProjectionConflict(errors.StoreError):
    """A patient's rows did not settle after repeated concurrent changes; retry later."""


# ------------------------------------------------------------------------------ writes
def _write_row(store: DocumentStore, row: Row, gen: int, seq: int, rewrite: bool) -> None:
    existing = view_rows.read_row(store, gen, row.key)
    try:
        if existing is None:
            view_rows.write_row(store, row, gen, seq, None)
        elif existing.seq < seq or (rewrite and existing.seq == seq):
            view_rows.write_row(store, row, gen, seq, existing)
        # else: a newer state already wrote this row
    except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
        raise ProjectionConflict("row changed concurrently") from None


def _delete_row(store: DocumentStore, key: RowKey, gen: int, seq: int) -> None:
    existing = view_rows.read_row(store, gen, key)
    if existing is None or existing.seq > seq:
        return
    try:
        view_rows.delete_row(store, gen, key, etag=existing.etag)
    except (errors.PreconditionFailed, errors.NotFound):
        raise ProjectionConflict("row changed concurrently") from None


def _move(store: DocumentStore, gen: int, old: PatientState, new: PatientState,
          owned: list[RowKey], touched: set[RowKey], rewrite: bool) -> list[RowKey]:
    """Write ``new``'s rows, delete the rest of ``owned`` and ``touched``; returns new keys.

    ``rewrite``: write every row even if the old state had it the same (repairs drift).
    """
    before = {} if rewrite else rows_for(old)
    after = rows_for(new)
    writes, deletes = diff(before, after)
    # Rows the tracker says we own but the old state does not produce (a crash between
    # writing rows and the tracker, or a concurrent writer) are deleted too.
    stray = (set(owned) | touched) - set(after) - set(deletes)
    for row in writes:
        touched.add(row.key)
        _write_row(store, row, gen, new.seq, rewrite)
    for key in [*deletes, *sorted(stray)]:
        _delete_row(store, key, gen, new.seq)
    failpoints.hit("after_rows")
    return sorted(after)


# ------------------------------------------------------------------------------ entry points
def apply(store: DocumentStore, gen: int, patient_id: str, event: dict[str, Any] | None,
          *, repair: bool = False, touched: set[RowKey] | None = None) -> str:
    """Apply one event's contents in generation ``gen``: applied, duplicate or rebuilt.

    ``event=None`` rebuilds from the source record; ``repair`` also rewrites unchanged rows;
    ``touched``: rows that may have been written for this patient outside its tracker (they
    are deleted unless the new state has them).
    """
    touched = set(touched or ())
    from_source_now = event is None
    for _ in range(MAX_ATTEMPTS):
        state, owned, etag = read_tracker(store, patient_id, gen)
        if from_source_now:
            source = read_source(store, patient_id)
            new, outcome = (source, "rebuilt") if source.seq >= state.seq else (state, "duplicate")
        else:
            assert event is not None
            new, outcome = step(state, event, lambda: read_source(store, patient_id))
        if outcome == "duplicate" and not touched and not repair:
            return outcome
        try:
            # rows owned by a tracker of an older shape may be of an older format: rewrite
            rewrite = repair or state.shape != new.shape
            rows = _move(store, gen, state, new, owned, touched, rewrite=rewrite)
            save_tracker(store, gen, new, rows, etag)
        except (ProjectionConflict, errors.Conflict, errors.PreconditionFailed):
            from_source_now = True  # someone else moved this patient: converge on the source
            continue
        return outcome
    raise ProjectionConflict(f"rows did not settle after {MAX_ATTEMPTS} attempts")


def rebuild_patient(store: DocumentStore, gen: int, patient_id: str, *,
                    repair: bool = False, touched: set[RowKey] | None = None) -> str:
    """Bring the patient's rows in ``gen`` up to the source record (rebuilds, repairs)."""
    return apply(store, gen, patient_id, None, repair=repair, touched=touched)


def build_patients(store: DocumentStore, gen: int, patient_ids: list[str]) -> list[str]:
    """Write the rows of patients that have none yet in ``gen`` (a new generation), many
    rows per transactional batch; returns the patients that went the careful way
    (:func:`rebuild_patient`).

    A view partition's rows of many patients go in batches of up to 100 creates, which
    costs a fraction of one write per row (on SQLite every index is updated once per
    transaction, not once per row; on Cosmos, one round trip). Each patient's tracker is
    created last, as in :func:`apply`. Anything already there — a live event projected
    into the building generation meanwhile — fails its batch or its tracker create, and
    those patients go the careful way, which also deletes rows written here that their
    newest state no longer has.
    """
    states = {pid: read_source(store, pid) for pid in patient_ids}
    by_pk: dict[str, list[tuple[str, Row, int]]] = {}
    keys_of: dict[str, set[RowKey]] = {}
    for pid, state in states.items():
        rows = rows_for(state)
        keys_of[pid] = set(rows)
        for row in rows.values():
            by_pk.setdefault(view_pk(row.view, gen, row.bucket), []).append(
                (pid, row, state.seq))
    careful: set[str] = set()
    for items in by_pk.values():
        for start in range(0, len(items), MAX_BATCH_OPERATIONS):
            chunk = items[start:start + MAX_BATCH_OPERATIONS]
            while chunk:
                chunk = [item for item in chunk if item[0] not in careful]
                try:
                    if chunk:
                        view_rows.create_rows(store, gen, [(row, seq) for _, row, seq in chunk])
                    break
                except errors.BatchFailed as exc:  # that row exists: its patient goes careful
                    careful.add(chunk[exc.index][0])
    for pid, state in states.items():
        if pid in careful:
            continue
        try:
            save_tracker(store, gen, state, sorted(keys_of[pid]), None)
        except errors.Conflict:
            careful.add(pid)
    for pid in careful:
        rebuild_patient(store, gen, pid, touched=keys_of[pid])
    return sorted(careful)
