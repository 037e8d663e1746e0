"""Handover notes, one document per patient and shift in the patient's partition
(``handover-<shift>``), beside the record; written with the record's events in one batch
(see :mod:`patients.use_cases.handovers`)."""

from __future__ import annotations

from typing import Any

from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys

HANDOVER = "Handover"


def doc_id(shift: str) -> str:
    return f"handover-{shift}"


def to_doc(patient_id: str, handover: dict[str, Any]) -> Document:
    return wrap(doc_id=doc_id(handover["handoverId"]), pk=keys.patient(patient_id),
                doc_type=HANDOVER, contents=handover)


def load(uow: UnitOfWork, patient_id: str, shift: str) -> dict[str, Any] | None:
    """The shift's note through ``uow`` (tracked, so a save replaces this very version)."""
    doc = uow.try_get(keys.patient(patient_id), doc_id(shift))
    return None if doc is None else dict(doc["docContents"])


def stage(uow: UnitOfWork, patient_id: str, handover: dict[str, Any], *, exists: bool) -> None:
    """Register the note's document in ``uow``: the repository's save commits it."""
    doc = to_doc(patient_id, handover)
    if exists:
        uow.update(doc)
    else:
        uow.add(doc)


def latest(store: DocumentStore, patient_id: str, limit: int = 6) -> list[dict[str, Any]]:
    """The patient's latest notes, newest shift first (one query)."""
    page = store.query(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", HANDOVER),), order_by=(("id", "DESC"),)), page_size=limit)
    return [dict(d["docContents"]) for d in page.items]


def of_shift(store: DocumentStore, patient_id: str, shift: str) -> dict[str, Any] | None:
    doc = store.try_read(keys.patient(patient_id), doc_id(shift))
    return None if doc is None else dict(doc["docContents"])
