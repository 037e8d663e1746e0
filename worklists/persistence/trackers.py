"""Trackers: per patient and generation, the folded state, its sequence and the rows it owns.

``V_Track_<patientId>/tracker-g<n>``: one small partition per patient. The tracker is
written last under its etag, so it is what makes a projection count as done.
"""

from __future__ import annotations

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


def read_tracker(store: DocumentStore, patient_id: str, gen: int) -> Tracker:
    """The stored tracker, or an empty state owning nothing when there is none."""
    doc = store.try_read(tracker_pk(patient_id), tracker_id(gen))
    if doc is None:
        return Tracker(PatientState(patient_id), [], None)
    c = doc["docContents"]
    rows: list[RowKey] = [(view, bucket, row_id) for view, bucket, row_id in c["rows"]]
    return Tracker(PatientState.from_json(c["state"]), rows, doc["_etag"])


def save_tracker(store: DocumentStore, gen: int, state: PatientState, rows: list[RowKey],
                 etag: str | None) -> None:
    """Create the tracker (``etag`` None) or replace the one read with ``etag``."""
    doc = wrap(doc_id=tracker_id(gen), pk=tracker_pk(state.patient_id), doc_type="ViewTracker",
               contents={"generation": gen, "seq": state.seq, "state": state.as_json(),
                         "rows": [list(k) for k in rows]})
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
