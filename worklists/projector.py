"""Applies the pure projection rules to the store, version-guarded per patient.

Every view row carries the snapshot sequence it was computed from, and a row is only ever
replaced by a newer one. The per-patient tracker (last applied sequence + rows owned) is
written last under its etag; if another worker got there first we reconcile again from a
fresh snapshot, so concurrent or out-of-order tasks converge on the newest record.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors, keys
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import STREAM_ID
from cosmos_backend.store import Cond, Document, DocumentStore, Query

from .projections import Row, Snapshot, plan, should_apply
from .schema import TRACKER_ID, tracker_pk, view_pk

MAX_RECONCILE = 8


class ProjectionConflict(errors.StoreError):
    """Could not settle a patient's rows after repeated concurrent changes; retry later."""


def snapshot(store: DocumentStore, patient_id: str) -> Snapshot:
    pk = keys.patient(patient_id)
    # The stream is read first: everything read after it is at least as new as its sequence,
    # so labelling the snapshot with it can only under-state, never over-state, its age.
    stream = store.try_read(pk, STREAM_ID)
    seq = 0 if stream is None else int(stream["docContents"]["seq"])
    docs = store.query_all(pk, Query(where=(
        Cond("docType", "in", ["Patient", "Admission"]),)), page_size=1000)
    patient = next((d["docContents"] for d in docs if d["docType"] == "Patient"), None)
    admission = next((d["docContents"] for d in docs if d["docType"] == "Admission"
                      and d["docContents"].get("status") == "active"), None)
    return Snapshot(patient_id=patient_id, seq=seq, patient=patient, admission=admission)


def _row_doc(row: Row, seq: int) -> Document:
    return wrap(doc_id=row.row_id, pk=view_pk(row.view, row.bucket), doc_type="ViewRow",
                sub_type=row.view,
                contents={**row.contents, "seq": seq,
                          "projectedAt": datetime.now(UTC).isoformat()},
                query_fields=row.query)


def _write_row(store: DocumentStore, row: Row, seq: int) -> None:
    doc = _row_doc(row, seq)
    existing = store.try_read(doc["partitionKey"], doc["id"])
    if existing is None:
        try:
            store.create(doc)
        except errors.Conflict:
            raise ProjectionConflict("row appeared concurrently") from None
        return
    if existing["docContents"].get("seq", 0) >= seq:
        return  # a newer snapshot already wrote this row
    try:
        store.replace(doc, if_match=existing["_etag"])
    except errors.PreconditionFailed:
        raise ProjectionConflict("row changed concurrently") from None


def _remove_row(store: DocumentStore, key: tuple[str, str, str], seq: int) -> None:
    view, bucket, row_id = key
    existing = store.try_read(view_pk(view, bucket), row_id)
    if existing is None or existing["docContents"].get("seq", 0) > seq:
        return
    try:
        store.delete(existing["partitionKey"], row_id, if_match=existing["_etag"])
    except (errors.PreconditionFailed, errors.NotFound):
        raise ProjectionConflict("row changed concurrently") from None


def _tracker(store: DocumentStore, patient_id: str) -> tuple[int, list[tuple[str, str, str]], Document | None]:
    doc = store.try_read(tracker_pk(patient_id), TRACKER_ID)
    if doc is None:
        return 0, [], None
    c = doc["docContents"]
    return int(c["seq"]), [tuple(k) for k in c.get("rows", [])], doc  # type: ignore[misc]


def reconcile(store: DocumentStore, patient_id: str) -> int:
    """Bring the patient's view rows up to the current record; returns the applied seq."""
    extra: set[tuple[str, str, str]] = set()
    for _ in range(MAX_RECONCILE):
        applied, owned, tracker = _tracker(store, patient_id)
        snap = snapshot(store, patient_id)
        rows, removed = plan(snap, sorted(set(owned) | extra))
        try:
            for row in rows:
                _write_row(store, row, snap.seq)
                extra.add(row.key)
            for key in removed:
                _remove_row(store, key, snap.seq)
        except ProjectionConflict:
            continue
        contents: dict[str, Any] = {"seq": max(snap.seq, applied),
                                    "rows": [list(r.key) for r in rows]}
        doc = wrap(doc_id=TRACKER_ID, pk=tracker_pk(patient_id), doc_type="ViewTracker",
                   contents=contents)
        try:
            if tracker is None:
                store.create(doc)
            else:
                store.replace(doc, if_match=tracker["_etag"])
        except (errors.Conflict, errors.PreconditionFailed):
            continue  # someone reconciled meanwhile: our writes may be stale, go again
        return snap.seq
    raise ProjectionConflict(f"patient rows did not settle after {MAX_RECONCILE} attempts")


def apply_event(store: DocumentStore, stream_pk: str, seq: int) -> str:
    """Project the event ``seq`` of ``stream_pk``: 'skipped' (already covered) or 'applied'."""
    patient_id = keys.suffix(stream_pk)
    applied, _, _ = _tracker(store, patient_id)
    if not should_apply(seq, applied):
        return "skipped"
    reconcile(store, patient_id)
    return "applied"
