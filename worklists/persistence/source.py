"""The projection's source of truth: a patient's record, read through the patients app."""

from __future__ import annotations

from cosmos_backend.store import DocumentStore
from patients.persistence import reference
from patients.persistence.snapshots import read_snapshot
from worklists.projection.rules import from_source
from worklists.projection.state import PatientState


def read_source(store: DocumentStore, patient_id: str) -> PatientState:
    """The patient's state from its partition, in ONE query (one consistent read); the
    frequencies of medication orders older than their own ``frequencyHours`` come from the
    reference cache."""
    record = read_snapshot(store, patient_id)
    hours = {}
    if any(o.kind == "medication" and o.details.get("frequencyHours") is None
           for o in record.orders):
        hours = {code: float(f.get("hours") or 0)
                 for code, f in reference.all_of(store, "Frequency").items()}
    return from_source(patient_id, record.seq, record.patient, record.admissions,
                       record.orders, hours, record.handovers, record.observations)
