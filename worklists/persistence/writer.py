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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import MAX_BATCH_OPERATIONS, BatchOp, DocumentStore
from hisadmin.core import failpoints
from hisadmin.core.cache import LruCache
from worklists.persistence import view_rows
from worklists.persistence.source import holds_row, read_source
from worklists.persistence.trackers import (
    Tracker,
    bucket_of,
    create_trackers,
    delete_legacy_tracker,
    read_legacy_tracker,
    read_tracker,
    save_tracker,
    tracker_op,
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


Fast = dict[str, list[tuple[RowKey, BatchOp]]]  # per view partition: its rows' operations


def _move(store: DocumentStore, gen: int, old: PatientState, new: PatientState,
          owned: list[RowKey], etags: Etags, touched: set[RowKey], *, rewrite: bool,
          careful: bool) -> tuple[list[RowKey], Etags]:
    """Write ``new``'s rows, delete the rest of ``owned`` and ``touched``; returns the new
    keys and their etags (see :func:`_plan`)."""
    rows, left, fast = _plan(store, gen, old, new, owned, etags, touched, rewrite=rewrite,
                             careful=careful)
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
    return rows, left


def _plan(store: DocumentStore, gen: int, old: PatientState, new: PatientState,
          owned: list[RowKey], etags: Etags, touched: set[RowKey], *, rewrite: bool,
          careful: bool) -> tuple[list[RowKey], Etags, Fast]:
    """What moving from ``old`` to ``new`` writes: the new keys, their etags as known so
    far, and the operations still to run per view partition.

    ``rewrite``: write every row even if the old state had it the same (repairs drift).
    Unless ``careful``, a row the tracker knows the etag of is replaced or deleted under that
    etag without being read, a row it does not own is created, and a view partition's
    changes go as one transactional batch (returned, not run); any of these failing means
    someone else wrote there (or a crash left a row the tracker never owned): the caller
    goes the careful way, which reads each row first (and writes it here, at once).
    """
    before = {} if rewrite else rows_for(old)
    after = rows_for(new)
    writes, deletes = diff(before, after)
    # Rows the tracker says we own but the old state does not produce (a crash between
    # writing rows and the tracker, or a concurrent writer) are deleted too.
    stray = (set(owned) | touched) - set(after) - set(deletes)
    left: Etags = {key: etags.get(key) for key in after}
    fast: Fast = {}
    for row in writes:
        touched.add(row.key)
        known = etags.get(row.key)
        if careful or (row.key in owned and not known):
            left[row.key] = _write_row(store, row, gen, new.seq, rewrite)
        else:
            pk, op = view_rows.write_op(store, row, gen, new.seq, known)
            fast.setdefault(pk, []).append((row.key, op))
    for key in [*deletes, *sorted(stray)]:
        known = etags.get(key)
        if careful or not known:
            _delete_row(store, key, gen, new.seq, new.patient_id)
        else:
            touched.add(key)
            pk, op = view_rows.delete_op(store, gen, key, known)
            fast.setdefault(pk, []).append((key, op))
    return sorted(after), left, fast


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
    page = _staging.get()
    if page is not None and page.store is not store:
        page = None
    if page is not None and key in page.staged:
        page.flush()  # this patient's earlier writes of the page first: its tracker moved
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
            if page is not None and attempt == 0 and legacy is None and not (
                    careful or rewrite):
                page.stage(key, new, *_plan(store, gen, state, new, owned, etags, touched,
                                            rewrite=False, careful=False), etag, touched)
                return outcome
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


# ------------------------------------------------------------------------------ pages
@dataclass
class _Staged:
    """One patient's projection in one generation whose writes wait for the page's flush."""

    label: object  # what the page calls the stream it came from
    new: PatientState
    rows: list[RowKey]  # the rows the new state owns
    left: Etags  # their etags: known so far, then as the flush wrote them
    ops: Fast  # the row writes still to run, per view partition
    tracker_etag: str | None  # the tracker as read (None: there is none yet)
    touched: set[RowKey]  # every row it writes or deletes (for a careful redo)
    failed: bool = False


_staging: ContextVar[PageWrites | None] = ContextVar("worklists_page_writes", default=None)


class PageWrites:
    """The writes of a change-feed page, held and run together: every view partition's
    rows of all the page's patients in one batch (up to 100 operations), then every
    tracker bucket's trackers in one, instead of one of each per patient.

    Per patient the order stays rows first, tracker last (under the etag it was read at),
    so a crash in between is repaired as ever when the events come again. An operation that
    fails its batch (someone else wrote that row or tracker) takes its patient out of the
    page: the batch runs again without it and the patient is brought up to its record the
    careful way (each row read first), as :func:`apply` does after a conflict. Only the
    fast path is held; a patient that needs reading (no etag known, a rewrite, a retry)
    writes at once, as outside a page.
    """

    def __init__(self, store: DocumentStore) -> None:
        self.store = store
        self.staged: dict[tuple[int, int, str], _Staged] = {}
        self.failed: list[object] = []  # labels of streams whose careful redo failed too
        self._label: object = None

    @contextmanager
    def stream(self, label: object) -> Iterator[None]:
        """Stage the writes of stream ``label``; when the block raises, they are dropped."""
        self._label = label
        mine = set(self.staged)
        try:
            yield
        except BaseException:
            for key in set(self.staged) - mine:
                del self.staged[key]
            raise
        finally:
            self._label = None

    def stage(self, key: tuple[int, int, str], new: PatientState, rows: list[RowKey],
              left: Etags, ops: Fast, tracker_etag: str | None, touched: set[RowKey]
              ) -> None:
        self.staged[key] = _Staged(self._label, new, rows, left, ops, tracker_etag,
                                   set(touched))

    def flush(self) -> list[object]:
        """Run the held writes; returns the labels of the streams that failed for good
        (every one's redo raised), which the caller sends on alone."""
        staged, self.staged = self.staged, {}
        if not staged:
            return []
        rows: dict[str, list[tuple[tuple[int, int, str], RowKey | None, BatchOp]]] = {}
        for key, one in staged.items():
            for pk, keyed in one.ops.items():
                rows.setdefault(pk, []).extend((key, row, op) for row, op in keyed)
        for pk, items in rows.items():
            for key, row, etag in self._run(pk, items, staged):
                if row is not None and row in staged[key].left:
                    staged[key].left[row] = etag
        failpoints.hit("after_rows")
        trackers: dict[str, list[tuple[tuple[int, int, str], RowKey | None, BatchOp]]] = {}
        for key, one in staged.items():
            if not one.failed:
                pk, op = tracker_op(key[1], one.new, one.rows, one.tracker_etag, one.left)
                trackers.setdefault(pk, []).append((key, None, op))
        for pk, items in trackers.items():
            for key, _, etag in self._run(pk, items, staged):
                one = staged[key]
                _recent.put(key, Tracker(one.new, one.rows, etag,
                                         {k: v for k, v in one.left.items() if v}))
        failed = []
        token = _staging.set(None)  # a redo writes at once
        try:
            for key, one in staged.items():
                if one.failed:
                    try:
                        with self.store.grouped():  # a savepoint: a failed redo is undone
                            apply(self.store, key[1], key[2], None, touched=one.touched)
                    except Exception:  # noqa: BLE001 - handed to the caller, never dropped
                        _recent.forget(key)
                        failed.append(one.label)
        finally:
            _staging.reset(token)
        self.failed.extend(failed)
        return failed

    def _run(self, pk: str, items: list[tuple[tuple[int, int, str], RowKey | None, BatchOp]],
             staged: dict[tuple[int, int, str], _Staged]
             ) -> list[tuple[tuple[int, int, str], RowKey | None, str | None]]:
        """Run one partition's operations in batches; an operation that fails takes its
        patient out (marked failed, its operations dropped: its redo says why) and the
        batch runs again. The store failing (throttled, unavailable) fails the page."""
        done = []
        for start in range(0, len(items), MAX_BATCH_OPERATIONS):
            chunk = items[start:start + MAX_BATCH_OPERATIONS]
            while chunk:
                chunk = [item for item in chunk if not staged[item[0]].failed]
                if not chunk:
                    break
                try:
                    etags = view_rows.execute(self.store, pk, [op for _, _, op in chunk])
                except errors.BatchFailed as exc:
                    if isinstance(exc.cause, (errors.Throttled, errors.Unavailable)):
                        raise
                    self._fail(staged, chunk[exc.index][0])
                    continue
                except (errors.Throttled, errors.Unavailable):
                    raise  # the store's, not a patient's: the page is retried whole
                except errors.StoreError:
                    self._fail(staged, chunk[0][0])  # a batch of one: that one
                    continue
                done += [(key, row, etag) for (key, row, _), etag in
                         zip(chunk, etags, strict=True)]
                break
        return done

    @staticmethod
    def _fail(staged: dict[tuple[int, int, str], _Staged], key: tuple[int, int, str]) -> None:
        staged[key].failed = True
        _recent.forget(key)


@contextmanager
def page_writes(store: DocumentStore) -> Iterator[PageWrites]:
    """Hold the fast-path writes of every :func:`apply` on ``store`` in this block (this
    thread or task) and run them together at its end (see :class:`PageWrites`); the
    labels of streams that failed for good are in ``.failed`` afterwards."""
    page = PageWrites(store)
    token = _staging.set(page)
    try:
        yield page
        page.flush()
    finally:
        _staging.reset(token)


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
            by_pk.setdefault(view_pk(store, row.view, gen, row.bucket), []).append(
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
