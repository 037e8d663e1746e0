"""The projection's source of truth: a patient's record, read through the patients app."""

from __future__ import annotations

from cosmos_backend.store import DocumentStore
from patients.persistence import reference
from patients.persistence.snapshots import RecordSnapshot, read_snapshot
from worklists.projection.rows import rows_for
from worklists.projection.rules import from_source
from worklists.projection.state import PatientState, RowKey


def read_source(store: DocumentStore, patient_id: str) -> PatientState:
    """The patient's state from its partition, in ONE query (one consistent read); the
    frequencies of medication orders older than their own ``frequencyHours`` come from the
    reference cache."""
    return _state(store, read_snapshot(store, patient_id))


def _state(store: DocumentStore, record: RecordSnapshot) -> PatientState:
    hours = {}
    if any(o.kind == "medication" and o.details.get("frequencyHours") is None
           for o in record.orders):
        hours = {code: float(f.get("hours") or 0)
                 for code, f in reference.all_of(store, "Frequency").items()}
    return from_source(record.patient_id, record.seq, record.patient, record.admissions,
                       record.orders, hours, record.handovers, record.observations)


def holds_row(store: DocumentStore, patient_id: str, key: RowKey) -> bool:
    """Whether the patient's record still makes the row ``key`` and keeps it: a record
    merged into another (or being merged) gives its rows up. The rows of a stay and its
    orders move between two patients with a merge (their ids are kept), so two patients'
    projections can meet on one row: the one whose record holds it keeps it."""
    record = read_snapshot(store, patient_id)
    if record.patient is None or record.patient.merged_into:
        return False
    return key in rows_for(_state(store, record))
