"""Reads of the clinical record: single-partition queries and point reads."""

from __future__ import annotations

from typing import Any

from cosmos_backend import errors, keys
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from patients.domain.errors import UnknownPatient
from patients.persistence import mrn
from patients.persistence.documents import PATIENT_ID


def patient_doc(store: DocumentStore, patient_id: str) -> Document:
    try:
        return store.read(keys.patient(patient_id), PATIENT_ID)
    except (errors.NotFound, errors.InvalidRequest):
        raise UnknownPatient(f"No patient with id {patient_id}.") from None


def by_mrn(store: DocumentStore, value: str) -> Document | None:
    patient_id = mrn.lookup(store, value.strip().upper())
    return None if patient_id is None else store.try_read(keys.patient(patient_id), PATIENT_ID)


def admissions(store: DocumentStore, patient_id: str) -> list[Document]:
    return store.query_all(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", "Admission"),),
        order_by=(("docContents.startedAt", "DESC"),)))


def orders(store: DocumentStore, patient_id: str, *, active_only: bool = False) -> list[Document]:
    where = [Cond("docType", "=", "Order")]
    if active_only:
        where.append(Cond("docContents.status", "in", ["created", "ready", "in_progress"]))
    docs = store.query_all(keys.patient(patient_id), Query(where=tuple(where)))
    return sorted(docs, key=lambda d: d["docContents"]["placedAt"], reverse=True)


def events(store: DocumentStore, patient_id: str, *, page_size: int = 50,
           continuation: str | None = None) -> tuple[list[Document], str | None]:
    """The audit trail, newest first."""
    page = store.query(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", "Event"),), order_by=(("id", "DESC"),)),
        page_size=page_size, continuation=continuation)
    return page.items, page.continuation


def chart(store: DocumentStore, patient_id: str) -> dict[str, Any]:
    patient = patient_doc(store, patient_id)
    adms = admissions(store, patient_id)
    return {
        "patient": patient,
        "active_admission": next((a for a in adms if a["docContents"]["status"] == "active"),
                                 None),
        "admissions": adms,
    }
