"""Marks of one-off set-up steps (the demo patients), so a rerun knows they were done."""

from __future__ import annotations

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import DocumentStore
from hisadmin.core import keys

MARKS_PK = keys.reference("Setup")


def is_done(store: DocumentStore, step: str) -> bool:
    return store.try_read(MARKS_PK, step) is not None


def mark_done(store: DocumentStore, step: str) -> None:
    try:
        store.create(wrap(doc_id=step, pk=MARKS_PK, doc_type="Marker", contents={}))
    except errors.Conflict:
        pass  # done twice at once: one mark is enough
