"""MRN uniqueness across partitions: reserve in ``M_MRN_<mrn>``, then commit the patient.

The reservation is the explicit second-partition write of registration (reserve-then-commit
with compensation). It is created *pending* with a TTL; confirmed (TTL removed) after the
patient batch commits; deleted if that batch fails. A crash between the steps leaves a pending
reservation: if the patient exists it is confirmed on the next look, otherwise it expires.
"""

from __future__ import annotations

from django.conf import settings

from cosmos_backend import errors, keys
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore
from patients.domain.errors import DuplicateMrn, MrnBeingRegistered

RESERVATION_ID = "mrn"
PENDING_TTL = 600  # seconds a crashed registration may hold an MRN before it frees itself
COUNTER_PK = keys.unique("MRN", "counter")


def reservation_pk(mrn: str) -> str:
    return keys.unique("MRN", mrn)


def lookup(store: DocumentStore, mrn: str) -> str | None:
    """The patient id registered under ``mrn`` (a point read), or None."""
    try:
        doc = store.read(reservation_pk(mrn), RESERVATION_ID)
    except (errors.NotFound, errors.InvalidRequest):
        return None
    c = doc["docContents"]
    if c["state"] == "confirmed":
        return c["patientId"]
    if store.try_read(keys.patient(c["patientId"]), "patient") is not None:
        _confirm(store, doc)
        return c["patientId"]
    return None


def reserve(store: DocumentStore, mrn: str, patient_id: str) -> Document:
    doc = wrap(doc_id=RESERVATION_ID, pk=reservation_pk(mrn), doc_type="MrnReservation",
               contents={"mrn": mrn, "patientId": patient_id, "state": "pending"},
               ttl=PENDING_TTL)
    try:
        return store.create(doc)
    except errors.Conflict:
        owner = lookup(store, mrn)
        if owner is not None:
            raise DuplicateMrn(f"MRN {mrn} is already registered to another patient.") from None
        raise MrnBeingRegistered(
            f"MRN {mrn} is being registered right now; look the patient up by MRN in a moment."
        ) from None


def _confirm(store: DocumentStore, doc: Document) -> None:
    confirmed = {k: v for k, v in doc.items() if k != "ttl" and not k.startswith("_")}
    confirmed["docContents"] = {**doc["docContents"], "state": "confirmed"}
    try:
        store.replace(confirmed, if_match=doc["_etag"])
    except (errors.PreconditionFailed, errors.NotFound):
        pass  # someone else confirmed it meanwhile


def confirm(store: DocumentStore, reservation: Document) -> None:
    _confirm(store, reservation)


def release(store: DocumentStore, reservation: Document) -> None:
    """Compensation: the patient batch failed, so the MRN is free again."""
    try:
        store.delete(reservation["partitionKey"], RESERVATION_ID, if_match=reservation["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass


def next_mrn(store: DocumentStore) -> str:
    """A new MRN from an etag-guarded counter (retries on concurrent increments)."""
    for _ in range(50):
        doc = store.try_read(COUNTER_PK, "counter")
        if doc is None:
            try:
                doc = store.create(wrap(doc_id="counter", pk=COUNTER_PK, doc_type="Counter",
                                        contents={"n": 0}))
            except errors.Conflict:
                continue
        n = doc["docContents"]["n"] + 1
        updated = {k: v for k, v in doc.items() if not k.startswith("_")}
        updated["docContents"] = {"n": n}
        try:
            store.replace(updated, if_match=doc["_etag"])
        except errors.PreconditionFailed:
            continue
        return settings.MRN_FORMAT.format(n=n)
    raise errors.Unavailable("could not allocate an MRN; retry")
