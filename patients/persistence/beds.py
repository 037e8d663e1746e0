"""One patient per bed across partitions: an occupancy document per bed in ``M_BED_…``.

Admission reserves the bed first (create; on conflict the holder is checked and a stale
holder — whose admission has ended or never committed — is replaced under its etag), then
commits the admission batch, releasing the bed again if that fails. Discharge and transfer free
the bed after their batch commits; if that last step is lost, the next reservation finds the
holder's admission ended and takes the bed over, so a bed never stays blocked.
"""

from __future__ import annotations

import time

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core import keys
from patients.domain.errors import BedOccupied
from patients.persistence.documents import admission_doc_id

DOC_ID = "bed"


def bed_pk(ward_id: str, bed: str) -> str:
    return keys.unique("BED", f"{ward_id}.{bed}")


IN_FLIGHT_SECONDS = 60  # how long an uncommitted reservation is presumed still in flight


def _holder_active(store: DocumentStore, doc: Document) -> bool:
    c = doc["docContents"]
    adm = store.try_read(keys.patient(c["patientId"]), admission_doc_id(c["admissionId"]))
    if adm is None:
        # Not committed (yet): a young reservation may belong to an admission in flight.
        return time.time() - doc["_ts"] < IN_FLIGHT_SECONDS
    return adm["docContents"]["status"] == "active" and adm["docContents"].get("bed") == c["bed"] \
        and adm["docContents"].get("wardId") == c["wardId"]


def reserve(store: DocumentStore, *, ward_id: str, bed: str, patient_id: str,
            admission_id: str) -> Document:
    doc = wrap(doc_id=DOC_ID, pk=bed_pk(ward_id, bed), doc_type="BedOccupancy",
               contents={"wardId": ward_id, "bed": bed, "patientId": patient_id,
                         "admissionId": admission_id})
    try:
        return store.create(doc)
    except errors.Conflict:
        current = store.read(doc["partitionKey"], DOC_ID)
        if _holder_active(store, current):
            raise BedOccupied(f"Bed {bed} on {ward_id} is occupied; choose a free bed.") from None
        try:
            return store.replace(doc, if_match=current["_etag"])
        except errors.PreconditionFailed:
            raise BedOccupied(f"Bed {bed} on {ward_id} was just taken; choose a free bed.") from None


def release(store: DocumentStore, reservation: Document) -> None:
    try:
        store.delete(reservation["partitionKey"], DOC_ID, if_match=reservation["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass


def free(store: DocumentStore, *, ward_id: str, bed: str, admission_id: str) -> None:
    """Free a bed held by ``admission_id`` (after discharge/transfer committed)."""
    doc = store.try_read(bed_pk(ward_id, bed), DOC_ID)
    if doc is not None and doc["docContents"]["admissionId"] == admission_id:
        release(store, doc)


def is_occupied(store: DocumentStore, *, ward_id: str, bed: str) -> bool:
    doc = store.try_read(bed_pk(ward_id, bed), DOC_ID)
    return doc is not None and _holder_active(store, doc)
