"""Trackers: per patient and generation, the folded state, its sequence and the rows it owns.

``V_Track_<patientId>/tracker-g<n>``: one small partition per patient. The tracker is
written last under its etag, so it is what makes a projection count as done. With each row
it owns it keeps the row's etag as last written, so the next projection replaces or deletes
the row under that etag without reading it first (a row written by anyone else fails the
etag check, and the projection goes the careful way). Trackers written before etags were
kept hold none for their rows: those rows are read first, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from worklists.projection.state import PatientState, RowKey


def tracker_pk(patient_id: str) -> str:
    return keys.view("Track", patient_id)


def tracker_id(generation: int) -> str:
    return f"tracker-g{generation}"


class Tracker(NamedTuple):
    state: PatientState
    rows: list[RowKey]  # the rows this state owns in the generation
    etag: str | None  # None: no tracker stored yet
    row_etags: dict[RowKey, str] = {}  # noqa: RUF012 - never mutated; of the rows it knows


def read_tracker(store: DocumentStore, patient_id: str, gen: int) -> Tracker:
    """The stored tracker, or an empty state owning nothing when there is none."""
    doc = store.try_read(tracker_pk(patient_id), tracker_id(gen))
    if doc is None:
        return Tracker(PatientState(patient_id), [], None)
    c = doc["docContents"]
    rows: list[RowKey] = []
    row_etags: dict[RowKey, str] = {}
    for view, bucket, row_id, *etag in c["rows"]:
        rows.append((view, bucket, row_id))
        if etag and etag[0]:
            row_etags[(view, bucket, row_id)] = etag[0]
    return Tracker(PatientState.from_json(c["state"]), rows, doc["_etag"], row_etags)


def save_tracker(store: DocumentStore, gen: int, state: PatientState, rows: list[RowKey],
                 etag: str | None, row_etags: Mapping[RowKey, str | None] | None = None) -> None:
    """Create the tracker (``etag`` None) or replace the one read with ``etag``;
    ``row_etags``: the etag of each row as this projection left it, where known."""
    known = row_etags or {}
    doc = wrap(doc_id=tracker_id(gen), pk=tracker_pk(state.patient_id), doc_type="ViewTracker",
               contents={"generation": gen, "seq": state.seq, "state": state.as_json(),
                         "rows": [[*k, known.get(k)] for k in rows]})
    if etag is None:
        store.create(doc)
    else:
        store.replace(doc, if_match=etag)


def delete_tracker(store: DocumentStore, patient_id: str, gen: int) -> None:
    """Remove the tracker if there is one."""
    try:
        store.delete(tracker_pk(patient_id), tracker_id(gen))
    except errors.NotFound:
        pass
