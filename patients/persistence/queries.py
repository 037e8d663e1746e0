"""Reads of the clinical record for pages and the API: single-partition queries and point
reads, answered as plain dicts (the stored fields, camelCase, plus ``etag``: the version to
send back with a change). Envelopes stay here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cosmos_backend import errors
from cosmos_backend.outbox import event_id
from cosmos_backend.store import Cond, Document, DocumentStore, Query, iter_feed
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from patients.domain.errors import UnknownOrder, UnknownPatient
from patients.domain.merges import LockState
from patients.domain.orders import ACTIVE
from patients.domain.records import AdmissionStatus
from patients.persistence import mrn
from patients.persistence.documents import (
    ADMISSION,
    ORDER,
    PATIENT,
    PATIENT_ID,
    admission_doc_id,
    order_doc_id,
)

View = dict[str, Any]



def patient_documents(store: DocumentStore) -> Iterator[Document]:
    """Every registered patient's record document, by scanning the change feed from the
    beginning (the one way to list every partition on Cosmos without a cross-partition
    query)."""
    for feed_range in store.feed_ranges():
        for page in iter_feed(store, feed_range, max_items=1000):
            for doc in page.items:
                if (doc.get("docType") == PATIENT and doc.get("id") == PATIENT_ID
                        and str(doc.get("partitionKey", "")).startswith(keys.PATIENT)):
                    yield doc

def _view(doc: Document) -> View:
    return {**doc["docContents"], "etag": doc["_etag"]}


def patient(store: DocumentStore, patient_id: str) -> View:
    try:
        return _view(store.read(keys.patient(patient_id), PATIENT_ID))
    except (errors.NotFound, errors.InvalidRequest):
        raise UnknownPatient(f"No patient with id {patient_id}.") from None


def by_mrn(store: DocumentStore, value: str) -> View | None:
    """The patient holding the MRN; for a record merged into another, the survivor (the
    MRN of a merged record finds the one record the person has)."""
    patient_id = mrn.lookup(store, value.strip().upper())
    if patient_id is None:
        return None
    doc = store.try_read(keys.patient(patient_id), PATIENT_ID)
    lock = None if doc is None else doc["docContents"].get("mergedInto")
    if lock and lock.get("state") == LockState.MERGED:
        doc = store.try_read(keys.patient(lock["survivorId"]), PATIENT_ID) or doc
    return None if doc is None else _view(doc)


def admission(store: DocumentStore, patient_id: str, admission_id: str) -> View:
    return _view(store.read(keys.patient(patient_id), admission_doc_id(admission_id)))


def admissions(store: DocumentStore, patient_id: str) -> list[View]:
    """Newest first."""
    return [_view(d) for d in store.query_all(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", ADMISSION),),
        order_by=(("docContents.startedAt", "DESC"),)))]


def order(store: DocumentStore, patient_id: str, order_id: str) -> View:
    try:
        return _view(store.read(keys.patient(patient_id), order_doc_id(order_id)))
    except (errors.NotFound, errors.InvalidRequest):
        raise UnknownOrder(f"No order {order_id} on this patient.") from None


def orders(store: DocumentStore, patient_id: str, *, active_only: bool = False) -> list[View]:
    """Newest first."""
    where = [Cond("docType", "=", ORDER)]
    if active_only:
        where.append(Cond("docContents.status", "in", [str(s) for s in ACTIVE]))
    docs = store.query_all(keys.patient(patient_id), Query(where=tuple(where)))
    return [_view(d) for d in sorted(docs, key=lambda d: d["docContents"]["placedAt"],
                                     reverse=True)]


def events(store: DocumentStore, patient_id: str, *, page_size: int = 50,
           continuation: str | None = None) -> tuple[list[View], str | None]:
    """The audit trail, newest first: each event's type, seq, time, actor and data."""
    page = store.query(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", "Event"),), order_by=(("id", "DESC"),)),
        page_size=page_size, continuation=continuation)
    return [dict(d["docContents"]) for d in page.items], page.continuation


def event(store: DocumentStore, stream_pk: str, seq: int) -> View | None:
    """Event ``seq`` of a patient's stream (type, seq, data…), or None if it is gone."""
    doc = store.try_read(stream_pk, event_id(seq))
    return None if doc is None else dict(doc["docContents"])


def chart(store: DocumentStore, patient_id: str) -> dict[str, Any]:
    """The patient, every admission (newest first) and the active one."""
    record = patient(store, patient_id)
    stays = admissions(store, patient_id)
    return {"patient": record, "admissions": stays,
            "active_admission": next((a for a in stays if a["status"] == AdmissionStatus.ACTIVE),
                                     None)}



def committed(uow: UnitOfWork, patient_id: str, kind: str, key: str = "") -> View | None:
    """The aggregate as a command through ``uow`` just wrote it (no read): ``kind`` is
    ``patient``, ``admission`` or ``order``, ``key`` the admission or order id. None when
    the command wrote nothing of it."""
    doc_id = {"patient": lambda: PATIENT_ID, "admission": lambda: admission_doc_id(key),
              "order": lambda: order_doc_id(key)}[kind]()
    pk = keys.patient(patient_id)
    for doc in reversed(uow.committed):
        if doc["id"] == doc_id and doc["partitionKey"] == pk:
            return _view(doc)
    return None
