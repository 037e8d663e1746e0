"""Trackers: per patient and generation, the folded state, its sequence and the rows it owns.

``V_Track_g<n>_<bucket>/<patientId>``: a generation's trackers in ``BUCKETS`` partitions, a
patient's bucket fixed by a hash of its id. One point read finds a patient's tracker, and a
rebuild creates (and a retired generation's drop deletes) trackers a batch per bucket
instead of one write per patient. The tracker is written last under its etag, so it is what
makes a projection count as done. With each row it owns it keeps the row's etag as last
written, so the next projection replaces or deletes the row under that etag without reading
it first (a row written by anyone else fails the etag check, and the projection goes the
careful way). Trackers written before etags were kept hold none for their rows: those rows
are read first, once.

Trackers of releases before the buckets (``V_Track_<patientId>/tracker-g<n>``) are moved on
the patient's next event: a patient with history and no tracker is looked up there once,
its state and rows taken over, and the old tracker deleted once the new one is saved.
``rebuild_worklists`` moves everyone at once, and dropping a generation also deletes old
trackers (and their rows) of patients not yet moved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import BatchOp, Cond, Document, DocumentStore, Query, iter_query
from hisadmin.core import keys
from worklists.projection.state import PatientState, RowKey

BUCKETS = 64


def buckets() -> list[str]:
    return [f"{n:02d}" for n in range(BUCKETS)]


def bucket_of(patient_id: str) -> str:
    return f"{int(hashlib.sha1(patient_id.encode()).hexdigest()[:8], 16) % BUCKETS:02d}"


def tracker_pk(patient_id: str, generation: int) -> str:
    return bucket_pk(generation, bucket_of(patient_id))


def bucket_pk(generation: int, bucket: str) -> str:
    return keys.view("Track", f"g{generation}_{bucket}")


def legacy_pk(patient_id: str) -> str:
    """Where releases before the buckets kept a patient's trackers."""
    return keys.view("Track", patient_id)


def legacy_id(generation: int) -> str:
    return f"tracker-g{generation}"


class Tracker(NamedTuple):
    state: PatientState
    rows: list[RowKey]  # the rows this state owns in the generation
    etag: str | None  # None: no tracker stored yet
    row_etags: dict[RowKey, str] = {}  # noqa: RUF012 - never mutated; of the rows it knows


def read_tracker(store: DocumentStore, patient_id: str, gen: int) -> Tracker:
    """The stored tracker, or an empty state owning nothing when there is none."""
    doc = store.try_read(tracker_pk(patient_id, gen), patient_id)
    if doc is None:
        return Tracker(PatientState(patient_id), [], None)
    return _tracker(doc)


def _tracker(doc: Document) -> Tracker:
    c = doc["docContents"]
    rows: list[RowKey] = []
    row_etags: dict[RowKey, str] = {}
    for view, bucket, row_id, *etag in c["rows"]:
        rows.append((view, bucket, row_id))
        if etag and etag[0]:
            row_etags[(view, bucket, row_id)] = etag[0]
    return Tracker(PatientState.from_json(c["state"]), rows, doc["_etag"], row_etags)


def save_tracker(store: DocumentStore, gen: int, state: PatientState, rows: list[RowKey],
                 etag: str | None, row_etags: Mapping[RowKey, str | None] | None = None) -> str:
    """Create the tracker (``etag`` None) or replace the one read with ``etag``;
    ``row_etags``: the etag of each row as this projection left it, where known. Returns the
    tracker's new etag."""
    doc = _document(gen, state, rows, row_etags)
    saved = store.create(doc) if etag is None else store.replace(doc, if_match=etag)
    return str(saved["_etag"])


def tracker_op(gen: int, state: PatientState, rows: Sequence[RowKey], etag: str | None,
               row_etags: Mapping[RowKey, str | None] | None = None) -> tuple[str, BatchOp]:
    """The partition and operation of :func:`save_tracker`, for a batch of its bucket."""
    doc = _document(gen, state, rows, row_etags)
    op = BatchOp.create(doc) if etag is None else BatchOp.replace(doc, if_match=etag)
    return doc["partitionKey"], op


def _document(gen: int, state: PatientState, rows: Sequence[RowKey],
              row_etags: Mapping[RowKey, str | None] | None) -> Document:
    known = row_etags or {}
    return wrap(doc_id=state.patient_id, pk=tracker_pk(state.patient_id, gen),
                doc_type="ViewTracker",
                contents={"generation": gen, "seq": state.seq, "state": state.as_json(),
                          "rows": [[*k, known.get(k)] for k in rows]})


def create_trackers(store: DocumentStore, gen: int,
                    trackers: Sequence[tuple[PatientState, Sequence[RowKey],
                                             Mapping[RowKey, str | None]]]) -> None:
    """Create the trackers of patients of ONE bucket in one transactional batch: all or
    none. Raises ``errors.BatchFailed`` whose ``index`` is the one that exists already."""
    docs = [_document(gen, state, rows, etags) for state, rows, etags in trackers]
    store.execute_batch(docs[0]["partitionKey"], [BatchOp.create(doc) for doc in docs])


def bucket_trackers(store: DocumentStore, gen: int, bucket: str) -> Iterator[Tracker]:
    """Every tracker of one bucket of generation ``gen``."""
    for doc in iter_query(store, bucket_pk(gen, bucket), Query(), page_size=500):
        yield _tracker(doc)


def saved_since(store: DocumentStore, gen: int, since: int) -> Iterator[str]:
    """The patients whose tracker in generation ``gen`` was saved at or after ``since`` (the
    store's ``_ts``, seconds since the epoch): one query per bucket."""
    for bucket in buckets():
        for doc in iter_query(store, bucket_pk(gen, bucket),
                              Query(where=(Cond("_ts", ">=", since),)), page_size=500):
            yield doc["id"]


def delete_trackers(store: DocumentStore, gen: int, bucket: str, patient_ids: Sequence[str]
                    ) -> None:
    """Delete these patients' trackers of one bucket, a batch at a time (each one alone
    when a batch fails: someone else deleted one meanwhile)."""
    pk = bucket_pk(gen, bucket)
    for start in range(0, len(patient_ids), 100):
        chunk = patient_ids[start:start + 100]
        try:
            store.execute_batch(pk, [BatchOp.delete(pid) for pid in chunk])
        except errors.BatchFailed:
            for pid in chunk:
                try:
                    store.delete(pk, pid)
                except errors.NotFound:
                    pass


def delete_tracker(store: DocumentStore, patient_id: str, gen: int) -> None:
    """Remove the tracker if there is one (and one a release before the buckets left)."""
    for pk, doc_id in ((tracker_pk(patient_id, gen), patient_id),
                       (legacy_pk(patient_id), legacy_id(gen))):
        try:
            store.delete(pk, doc_id)
        except errors.NotFound:
            pass


def delete_legacy_tracker(store: DocumentStore, patient_id: str, gen: int) -> None:
    try:
        store.delete(legacy_pk(patient_id), legacy_id(gen))
    except errors.NotFound:
        pass


def read_legacy_tracker(store: DocumentStore, patient_id: str, gen: int) -> Tracker | None:
    """The tracker a release before the buckets left, if any."""
    doc = store.try_read(legacy_pk(patient_id), legacy_id(gen))
    return None if doc is None else _tracker(doc)
