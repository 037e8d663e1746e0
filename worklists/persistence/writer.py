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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import MAX_BATCH_OPERATIONS, BatchOp, DocumentStore
from hisadmin.core.cache import LruCache
from worklists.persistence import failpoints, view_rows
from worklists.persistence.source import holds_row, read_source
from worklists.persistence.trackers import (
    Tracker,
    bucket_of,
    create_trackers,
    delete_legacy_tracker,
    read_legacy_tracker,
    read_tracker,
    save_tracker,
)
from worklists.persistence.view_rows import view_pk
from worklists.projection.rows import rows_for
from worklists.projection.rules import diff, step
from worklists.projection.state import PatientState, Row, RowKey

MAX_ATTEMPTS = 8


class ProjectionConflict(errors.StoreError):
    """A patient's rows did not settle after repeated concurrent changes; retry later."""


# ------------------------------------------------------------------------------ writes
Etags = dict[RowKey, str | None]  # a row's etag as this projection left it (None: unknown)
# The trackers this process saved last, so the next delivery of the same patient does not
# read its tracker again. Only ever a tracker as saved here, with its etag: if anyone else
# has written it since (another worker process, a rebuild, a repair), the rows' or the
# tracker's etag check fails and the projection goes the careful way, reading everything.
RECENT_TRACKERS = 2_000
_recent: LruCache[tuple[int, int, str], Tracker] = LruCache(RECENT_TRACKERS)
STRENGTH = {"duplicate": 0, "applied": 1, "rebuilt": 2}


def forget_recent() -> None:
    """Drop the trackers kept from this process's saves: writes were undone (a grouped
    page's stream rolled back), so a kept etag may name a version that never committed."""
    _recent.forget()


def _elsewhere(existing: view_rows.StoredRow, patient_id: str | None) -> str | None:
    """The other patient whose state wrote this row (a stay's or an order's rows move with a
    merge of two records: sequence numbers of two streams do not compare), or None."""
    owner = existing.contents.get("patientId")
    return owner if owner and patient_id and owner != patient_id else None


def _write_row(store: DocumentStore, row: Row, gen: int, seq: int, rewrite: bool) -> str | None:
    """The careful write: read the row, write it unless a newer state did (or another
    patient's record still holds it); its etag now (None when someone else owns it)."""
    existing = view_rows.read_row(store, gen, row.key)
    try:
        if existing is None:
            return view_rows.write_row(store, row, gen, seq, None)
        other = _elsewhere(existing, row.contents.get("patientId"))
        if other is not None:
            held = holds_row(store, other, row.key)
            return None if held else view_rows.write_row(store, row, gen, seq, existing)
        if existing.seq < seq or (rewrite and existing.seq == seq):
            return view_rows.write_row(store, row, gen, seq, existing)
        # else: this state (a crash before its tracker) or a newer one already wrote it
        return existing.etag if existing.seq == seq else None
    except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
        raise ProjectionConflict("row changed concurrently") from None


def _delete_row(store: DocumentStore, key: RowKey, gen: int, seq: int,
                patient_id: str) -> None:
    existing = view_rows.read_row(store, gen, key)
    if existing is None or _elsewhere(existing, patient_id) or existing.seq > seq:
        return  # gone, another patient's now (a merge), or a newer state's
    try:
        view_rows.delete_row(store, gen, key, etag=existing.etag)
    except (errors.PreconditionFailed, errors.NotFound):
        raise ProjectionConflict("row changed concurrently") from None


def _move(store: DocumentStore, gen: int, old: PatientState, new: PatientState,
          owned: list[RowKey], etags: Etags, touched: set[RowKey], *, rewrite: bool,
          careful: bool) -> tuple[list[RowKey], Etags]:
    """Write ``new``'s rows, delete the rest of ``owned`` and ``touched``; returns the new
    keys and their etags.

    ``rewrite``: write every row even if the old state had it the same (repairs drift).
    Unless ``careful``, a row the tracker knows the etag of is replaced or deleted under that
    etag without being read, a row it does not own is created, and a view partition's
    changes go as one transactional batch; any of these failing means someone else wrote
    there (or a crash left a row the tracker never owned): the caller goes the careful way,
    which reads each row first.
    """
    before = {} if rewrite else rows_for(old)
    after = rows_for(new)
    writes, deletes = diff(before, after)
    # Rows the tracker says we own but the old state does not produce (a crash between
    # writing rows and the tracker, or a concurrent writer) are deleted too.
    stray = (set(owned) | touched) - set(after) - set(deletes)
    left: Etags = {key: etags.get(key) for key in after}
    fast: dict[str, list[tuple[RowKey, BatchOp]]] = {}
    for row in writes:
        touched.add(row.key)
        known = etags.get(row.key)
        if careful or (row.key in owned and not known):
            left[row.key] = _write_row(store, row, gen, new.seq, rewrite)
        else:
            pk, op = view_rows.write_op(row, gen, new.seq, known)
            fast.setdefault(pk, []).append((row.key, op))
    for key in [*deletes, *sorted(stray)]:
        known = etags.get(key)
        if careful or not known:
            _delete_row(store, key, gen, new.seq, new.patient_id)
        else:
            pk, op = view_rows.delete_op(gen, key, known)
            fast.setdefault(pk, []).append((key, op))
    for pk, keyed in fast.items():
        for start in range(0, len(keyed), MAX_BATCH_OPERATIONS):
            chunk = keyed[start:start + MAX_BATCH_OPERATIONS]
            try:
                done = view_rows.execute(store, pk, [op for _, op in chunk])
            except (errors.Conflict, errors.PreconditionFailed, errors.NotFound,
                    errors.BatchFailed):
                raise ProjectionConflict("row changed concurrently") from None
            for (key, _), etag in zip(chunk, done, strict=True):
                if key in left:
                    left[key] = etag
    failpoints.hit("after_rows")
    return sorted(after), left


# ------------------------------------------------------------------------------ entry points
def _once(load: Callable[[], PatientState]) -> Callable[[], PatientState]:
    """``load`` called at most once (a batch of events may need the source more than once)."""
    kept: list[PatientState] = []

    def get() -> PatientState:
        if not kept:
            kept.append(load())
        return kept[0]

    return get


def apply(store: DocumentStore, gen: int, patient_id: str,
          events: dict[str, Any] | list[dict[str, Any]] | None, *, repair: bool = False,
          touched: set[RowKey] | None = None) -> str:
    """Apply events (one, or several of one patient in sequence order) in generation
    ``gen``: applied, duplicate or rebuilt (the strongest of them). Several events are
    folded first and their rows written once.

    ``events=None`` rebuilds from the source record; ``repair`` also rewrites unchanged rows;
    ``touched``: rows that may have been written for this patient outside its tracker (they
    are deleted unless the new state has them).
    """
    batch = [] if events is None else [events] if isinstance(events, dict) else list(events)
    touched = set(touched or ())
    from_source_now = events is None
    careful = repair or bool(touched)
    key = (id(store), gen, patient_id)
    for attempt in range(MAX_ATTEMPTS):
        kept = _recent.peek(key) if attempt == 0 and not careful else None
        if kept is None and attempt == 0 and not careful and batch and batch[0]["seq"] == 1:
            # A new patient has no tracker yet: not read. (A redelivery finds one when it
            # creates rows or the tracker, and goes the careful way.)
            kept = Tracker(PatientState(patient_id), [], None)
        state, owned, etag, etags = kept or read_tracker(store, patient_id, gen)
        legacy = None
        if etag is None and not (batch and int(batch[0]["seq"]) == 1):
            # No tracker, and not a new patient: one a release before the buckets kept?
            legacy = read_legacy_tracker(store, patient_id, gen)
            if legacy is not None:
                state, owned = legacy.state, legacy.rows
        source = _once(lambda: read_source(store, patient_id))
        if from_source_now:
            now = source()
            new, outcome = (now, "rebuilt") if now.seq >= state.seq else (state, "duplicate")
        else:
            new, outcome = state, "duplicate"
            for event in batch:
                new, one = step(new, event, source)
                outcome = max(outcome, one, key=STRENGTH.__getitem__)
        if outcome == "duplicate" and not touched and not repair:
            return outcome
        try:
            # rows owned by a tracker of an older shape may be of an older format: rewrite
            rewrite = repair or state.shape != new.shape
            rows, row_etags = _move(store, gen, state, new, owned, etags, touched,
                                    rewrite=rewrite, careful=careful or rewrite)
            saved = save_tracker(store, gen, new, rows, etag, row_etags)
        except (ProjectionConflict, errors.Conflict, errors.PreconditionFailed,
                errors.NotFound):  # NotFound: the tracker was deleted meanwhile
            _recent.forget(key)
            from_source_now = careful = True  # someone else moved this patient: the source
            continue
        except BaseException:
            _recent.forget(key)
            raise
        _recent.put(key, Tracker(new, rows, saved, {k: v for k, v in row_etags.items() if v}))
        if legacy is not None:
            delete_legacy_tracker(store, patient_id, gen)
        return outcome
    raise ProjectionConflict(f"rows did not settle after {MAX_ATTEMPTS} attempts")


def rebuild_patient(store: DocumentStore, gen: int, patient_id: str, *,
                    repair: bool = False, touched: set[RowKey] | None = None) -> str:
    """Bring the patient's rows in ``gen`` up to the source record (rebuilds, repairs)."""
    return apply(store, gen, patient_id, None, repair=repair, touched=touched)


@dataclass(frozen=True)
class Built:
    """What :func:`build_patients` did: the sequence number each patient was built at (the
    last event its record held), and the patients that went the careful way."""

    seqs: dict[str, int]
    careful: list[str]


def build_patients(store: DocumentStore, gen: int, patient_ids: list[str]) -> Built:
    """Write the rows of patients that have none yet in ``gen`` (a new generation), many
    rows per transactional batch (see :class:`Built` for what it returns).

    A view partition's rows of many patients go in batches of up to 100 creates, which
    costs a fraction of one write per row (on SQLite every index is updated once per
    transaction, not once per row; on Cosmos, one round trip). The trackers are created
    last, as in :func:`apply`, a batch per tracker bucket. Anything already there — a live event projected
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
    etags_of: dict[str, Etags] = {}
    for items in by_pk.values():
        for start in range(0, len(items), MAX_BATCH_OPERATIONS):
            chunk = items[start:start + MAX_BATCH_OPERATIONS]
            while chunk:
                chunk = [item for item in chunk if item[0] not in careful]
                try:
                    if chunk:
                        made = view_rows.create_rows(store, gen,
                                                     [(row, seq) for _, row, seq in chunk])
                        for (pid, row, _), etag in zip(chunk, made, strict=True):
                            etags_of.setdefault(pid, {})[row.key] = etag
                    break
                except errors.BatchFailed as exc:  # that row exists: its patient goes careful
                    careful.add(chunk[exc.index][0])
    by_bucket: dict[str, list[str]] = {}
    for pid in states:
        by_bucket.setdefault(bucket_of(pid), []).append(pid)
    for pids in by_bucket.values():
        for start in range(0, len(pids), MAX_BATCH_OPERATIONS):
            batch = pids[start:start + MAX_BATCH_OPERATIONS]
            while batch:
                batch = [pid for pid in batch if pid not in careful]
                try:
                    if batch:
                        create_trackers(store, gen, [
                            (states[pid], sorted(keys_of[pid]), etags_of.get(pid, {}))
                            for pid in batch])
                    break
                except errors.BatchFailed as exc:  # a live event made that one: careful
                    careful.add(batch[exc.index])
    for pid in careful:
        rebuild_patient(store, gen, pid, touched=keys_of[pid])
    return Built({pid: state.seq for pid, state in states.items()}, sorted(careful))
