"""A patient's whole current record as domain objects, for readers outside the record's
commands (the worklist projections rebuild from it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cosmos_backend.outbox import STREAM_DOC_TYPE
from cosmos_backend.store import Cond, DocumentStore, Query
from hisadmin.core import keys
from patients.domain.orders import Order
from patients.domain.records import Admission, Patient
from patients.persistence.documents import admission_from_doc, order_from_doc, patient_from_doc
from patients.persistence.handovers import HANDOVER
from patients.persistence.observations import SUMMARY


@dataclass(frozen=True)
class RecordSnapshot:
    """The record as of stream sequence ``seq``: every admission and order, any status,
    every handover note (as stored, :mod:`patients.persistence.handovers`) and the
    observations' summary (:mod:`patients.persistence.observations`; None: no set yet)."""

    patient_id: str
    seq: int
    patient: Patient | None
    admissions: list[Admission] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)
    handovers: list[dict[str, Any]] = field(default_factory=list)
    observations: dict[str, Any] | None = None


def read_snapshot(store: DocumentStore, patient_id: str) -> RecordSnapshot:
    """The record from its partition in ONE query (one consistent read)."""
    docs = store.query_all(keys.patient(patient_id), Query(where=(
        Cond("docType", "in", ["Patient", "Admission", "Order", HANDOVER, SUMMARY,
                               STREAM_DOC_TYPE]),)),
        page_size=1000)
    seq, patient, admissions, orders, notes = 0, None, [], [], []
    observations = None
    for doc in docs:
        kind = doc["docType"]
        if kind == STREAM_DOC_TYPE:
            seq = int(doc["docContents"]["seq"])
        elif kind == "Patient":
            patient = patient_from_doc(doc)
        elif kind == "Admission":
            admissions.append(admission_from_doc(doc))
        elif kind == HANDOVER:
            notes.append(dict(doc["docContents"]))
        elif kind == SUMMARY:
            observations = dict(doc["docContents"])
        else:
            orders.append(order_from_doc(doc))
    return RecordSnapshot(patient_id, seq, patient, admissions, orders, notes, observations)
