"""The patient-record repository: one read to load what a command needs, one batch to save.

:meth:`PatientRecords.load` reads the open record — patient, event-stream head, active
admission, active orders — with ONE single-partition query (the documents marked ``open``,
see :mod:`patients.persistence.documents`). :meth:`PatientRecords.save` writes every
aggregate that changed, the stream head and the command's events as ONE transactional
batch, each loaded document guarded by the version it was read at.

Use cases see domain objects and opaque versions only; envelopes, the stream document and
etags stay here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cosmos_backend import errors
from cosmos_backend.outbox import STREAM_DOC_TYPE, STREAM_ID, append_events, start_stream
from cosmos_backend.store import Cond, Document, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import Actor
from patients.domain.errors import UnknownOrder, UnknownPatient
from patients.domain.events import Event
from patients.domain.merges import refuse_commands
from patients.domain.orders import ACTIVE, Order
from patients.domain.records import Admission, AdmissionStatus, Patient
from patients.persistence.documents import (
    ADMISSION,
    OPEN_FIELD,
    ORDER,
    PATIENT,
    PATIENT_ID,
    admission_doc_id,
    admission_from_doc,
    admission_to_doc,
    order_doc_id,
    order_from_doc,
    order_to_doc,
    patient_from_doc,
    patient_to_doc,
)

Aggregate = Patient | Admission | Order
_RECORD_TYPES = [PATIENT, ADMISSION, ORDER, STREAM_DOC_TYPE]


@dataclass
class PatientRecord:
    """What a command works on: the patient, the active admission, the orders it loaded."""

    patient: Patient
    admission: Admission | None = None
    orders: dict[str, Order] = field(default_factory=dict)

    @property
    def patient_id(self) -> str:
        return self.patient.patient_id

    def active_orders(self, admission_id: str | None = None) -> list[Order]:
        """Active orders (of ``admission_id`` when given), oldest first."""
        return sorted((o for o in self.orders.values() if o.active and (
            admission_id is None or o.admission_id == admission_id)),
            key=lambda o: (o.placed_at, o.order_id))


def _doc_id(aggregate: Aggregate) -> str:
    if isinstance(aggregate, Patient):
        return PATIENT_ID
    if isinstance(aggregate, Admission):
        return admission_doc_id(aggregate.admission_id)
    return order_doc_id(aggregate.order_id)


def _to_doc(aggregate: Aggregate) -> Document:
    if isinstance(aggregate, Patient):
        return patient_to_doc(aggregate)
    if isinstance(aggregate, Admission):
        return admission_to_doc(aggregate)
    return order_to_doc(aggregate)


def _stored(doc: Document) -> Document:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


class PatientRecords:
    """Loads and saves patient records through one unit of work."""

    def __init__(self, uow: UnitOfWork) -> None:
        self.uow = uow
        # Per loaded or saved document: what is stored (to see what changed) and its etag.
        self._stored: dict[tuple[str, str], Document] = {}
        self._etags: dict[tuple[str, str], str] = {}

    # ------------------------------------------------------------------ reads
    def load(self, patient_id: str, *, order_id: str | None = None,
             merged: bool = False) -> PatientRecord:
        """The open record in one query; ``order_id``: an order that need not be active
        (one point read more when it is not). Raises UnknownPatient / UnknownOrder, and
        PatientMerged / MergeInProgress for a record merged (or being merged) into another
        unless ``merged`` (the merge's own steps)."""
        try:
            pk = keys.patient(patient_id)
        except errors.InvalidRequest:
            raise UnknownPatient(f"No patient with id {patient_id}.") from None
        docs = self.uow.query_all(pk, Query(where=(Cond(OPEN_FIELD, "=", True),)))
        if not any(d["docType"] == PATIENT for d in docs):
            docs = self._load_unmarked(pk)
        record = self._assemble(patient_id, docs)
        if not merged:
            refuse_commands(record.patient)
        if order_id is not None and order_id not in record.orders:
            try:
                doc = self.uow.get(pk, order_doc_id(order_id))
            except (errors.NotFound, errors.InvalidRequest):
                raise UnknownOrder(f"No order {order_id} on this patient.") from None
            self._remember(doc)
            record.orders[order_id] = order_from_doc(doc)
        return record

    def load_order(self, patient_id: str, order_id: str, expected_version: str | None = None
                   ) -> tuple[PatientRecord, Order]:
        """The record with the order named, which must still be at ``expected_version``."""
        record = self.load(patient_id, order_id=order_id)
        order = record.orders[order_id]
        self.expect(record, order, expected_version)
        return record, order

    def _load_unmarked(self, pk: str) -> list[Document]:
        """A record written before documents were marked ``open``: read it whole once; the
        next save marks what is open (the diff sees the missing marker)."""
        docs = self.uow.query_all(pk, Query(where=(Cond("docType", "in", _RECORD_TYPES),)))
        for doc in docs:
            if doc["docType"] == STREAM_DOC_TYPE:
                doc[OPEN_FIELD] = True  # the tracked copy: the save's stream update marks it
        return [d for d in docs if d["docType"] in (PATIENT, STREAM_DOC_TYPE)
                or d["docContents"].get("status") in (AdmissionStatus.ACTIVE, *ACTIVE)]

    def _assemble(self, patient_id: str, docs: list[Document]) -> PatientRecord:
        patient, admission, orders = None, None, {}
        for doc in docs:
            self._remember(doc)
            kind = doc["docType"]
            if kind == PATIENT:
                patient = patient_from_doc(doc)
            elif kind == ADMISSION:
                admission = admission_from_doc(doc)
            elif kind == ORDER:
                order = order_from_doc(doc)
                orders[order.order_id] = order
        if patient is None:
            raise UnknownPatient(f"No patient with id {patient_id}.")
        return PatientRecord(patient, admission, orders)

    def _remember(self, doc: Document) -> None:
        key = (doc["partitionKey"], doc["id"])
        self._stored[key] = _stored(doc)
        self._etags[key] = doc["_etag"]

    # ------------------------------------------------------------------ versions
    def version(self, record: PatientRecord, aggregate: Aggregate) -> str | None:
        """The version ``aggregate`` was loaded (or last saved) at; None if never stored."""
        return self._etags.get((keys.patient(record.patient_id), _doc_id(aggregate)))

    def expect(self, record: PatientRecord, aggregate: Aggregate, version: str | None) -> None:
        """Fail with StaleWrite unless ``aggregate`` is still at ``version`` (None: any)."""
        if version is not None and version != self.version(record, aggregate):
            raise StaleWrite(keys.patient(record.patient_id), _doc_id(aggregate))

    # ------------------------------------------------------------------ writes
    def create(self, patient: Patient) -> PatientRecord:
        """A new record: the patient and its empty event stream are created on save."""
        start_stream(self.uow, keys.patient(patient.patient_id), fields={OPEN_FIELD: True})
        return PatientRecord(patient)

    def save(self, record: PatientRecord, events: Sequence[Event], *, actor: Actor,
             now: datetime) -> None:
        """Write what changed and the events, as one batch (StaleWrite on a conflict)."""
        pk = keys.patient(record.patient_id)
        aggregates: list[Aggregate] = [record.patient]
        if record.admission is not None:
            aggregates.append(record.admission)
        aggregates.extend(record.orders.values())
        for aggregate in aggregates:
            doc = _to_doc(aggregate)
            key = (pk, doc["id"])
            if key not in self._stored:
                self.uow.add(doc)
            elif self._stored[key] != doc:
                self.uow.update(doc)
        append_events(self.uow, pk, [(e.event_type, e.payload()) for e in events],
                      actor=actor.as_dict(), now=now)
        for doc in self.uow.commit():
            if doc["id"] != STREAM_ID:
                self._remember(doc)
