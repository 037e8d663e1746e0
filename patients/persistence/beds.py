"""Bed holds, one partition per ward (``M_WARD_<ward>``): one document per held bed.

A bed is free when its ward has no document for it, occupied when the document holds an
admission (with what the board shows of the patient) and being cleaned when the document
says so. So a board is ONE query, and taking a free bed is ONE create:

- admit / transfer *reserve* the bed first (create; on a conflict the holder is checked:
  an occupied or cleaning bed is refused, a hold whose admission never committed is taken
  over under its etag), then commit the patient's batch, releasing the hold if that fails;
- after a discharge or a transfer out, the follow-up task sets the bed *to cleaning* (only
  if that admission still holds it, so a redelivery changes nothing);
- *marking it clean* deletes the document and appends a ``BedCleaned`` event naming who
  cleaned it to the ward's stream, in one batch.

Stores written before this layout held a bed in its own partition (``M_BED_<ward>.<bed>``);
:func:`migrate_legacy` moves those holds over once.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import append_events
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import Actor
from patients.domain.beds import Bed, BedState, Occupant
from patients.domain.errors import (
    BedBeingCleaned,
    BedNotBeingCleaned,
    BedOccupied,
    UnknownBed,
)
from patients.domain.events import BedCleaned
from patients.domain.records import AdmissionStatus
from patients.persistence.documents import (
    PATIENT_ID,
    admission_doc_id,
    admission_from_doc,
    patient_from_doc,
)

BED = "Bed"
IN_FLIGHT_SECONDS = 60  # how long an uncommitted reservation is presumed still in flight


def ward_pk(ward_id: str) -> str:
    return keys.unique("WARD", ward_id)


def bed_doc_id(bed: str) -> str:
    return f"bed-{bed}"


def _doc(ward_id: str, bed: str, contents: dict) -> Document:
    return wrap(
        doc_id=bed_doc_id(bed),
        pk=ward_pk(ward_id),
        doc_type=BED,
        contents={"wardId": ward_id, "bed": bed, **contents},
    )


def occupied_doc(ward_id: str, bed: str, occupant: Occupant, now: datetime) -> Document:
    return _doc(
        ward_id,
        bed,
        {
            "state": str(BedState.OCCUPIED),
            "since": now.isoformat(),
            "admissionId": occupant.admission_id,
            "patientId": occupant.patient_id,
            "occupant": occupant.to_dict(),
        },
    )


def cleaning_doc(ward_id: str, bed: str, admission_id: str, now: datetime) -> Document:
    return _doc(
        ward_id,
        bed,
        {"state": str(BedState.CLEANING), "since": now.isoformat(), "admissionId": admission_id},
    )


def bed_from_doc(doc: Document) -> Bed:
    c = doc["docContents"]
    state = BedState(c["state"])
    occupant = Occupant.from_dict(c["occupant"]) if state == BedState.OCCUPIED else None
    return Bed(
        ward_id=c["wardId"], code=c["bed"], state=state, occupant=occupant, since=c.get("since")
    )


# ------------------------------------------------------------------ reads
def held(store: DocumentStore, ward_id: str) -> dict[str, Document]:
    """The ward's bed documents by bed code (one query)."""
    docs = store.query_all(ward_pk(ward_id), Query(where=(Cond("docType", "=", BED),)))
    return {d["docContents"]["bed"]: d for d in docs}


def board(store: DocumentStore, ward_id: str, bed_codes: list[str]) -> list[Bed]:
    """Every bed of the ward in ``bed_codes`` order, free unless held (one query)."""
    docs = held(store, ward_id)
    return [
        bed_from_doc(docs[code])
        if code in docs
        else Bed(ward_id=ward_id, code=code, state=BedState.FREE)
        for code in bed_codes
    ]


def read_bed(store: DocumentStore, ward_id: str, bed: str) -> Document | None:
    return store.try_read(ward_pk(ward_id), bed_doc_id(bed))


def is_occupied(store: DocumentStore, *, ward_id: str, bed: str) -> bool:
    """True while the bed is held: by a patient or by its cleaning."""
    return read_bed(store, ward_id, bed) is not None


# ------------------------------------------------------------------ holding a bed
def _holder(store: DocumentStore, doc: Document) -> str:
    """Where an occupied hold stands: "active" (its admission is in this bed now),
    "in-flight" (not committed yet, and young), "never" (never committed) or "left"."""
    c = doc["docContents"]
    adm = store.try_read(keys.patient(c["patientId"]), admission_doc_id(c["admissionId"]))
    if adm is None:
        young = time.time() - doc["_ts"] < IN_FLIGHT_SECONDS
        return "in-flight" if young else "never"
    stay = admission_from_doc(adm)
    here = (stay.ward_id, stay.bed) == (c["wardId"], c["bed"])
    return "active" if stay.status == AdmissionStatus.ACTIVE and here else "left"


def reserve(
    store: DocumentStore, *, ward_id: str, bed: str, occupant: Occupant, now: datetime | None = None
) -> Document:
    """Hold a free bed for ``occupant`` (one create); BedOccupied / BedBeingCleaned if not
    free. A hold whose patient has left but whose cleaning was never recorded (the
    follow-up is late or lost) is set to cleaning here, so the board shows the truth."""
    now = now or datetime.now(UTC)
    doc = occupied_doc(ward_id, bed, occupant, now)
    try:
        return store.create(doc)
    except errors.Conflict:
        current = store.try_read(doc["partitionKey"], doc["id"])
    if current is None:  # cleaned or released meanwhile: one more try
        try:
            return store.create(doc)
        except errors.Conflict:
            raise BedOccupied(f"Bed {bed} was just taken; choose a free bed.") from None
    c = current["docContents"]
    if c["state"] == BedState.CLEANING:
        raise BedBeingCleaned(
            f"Bed {bed} is being cleaned; choose a free bed, or mark it "
            "clean on the bed board first."
        )
    holder = _holder(store, current)
    if holder in ("active", "in-flight"):
        raise BedOccupied(f"Bed {bed} is occupied; choose a free bed.")
    if holder == "left":
        try:
            store.replace(
                cleaning_doc(ward_id, bed, c["admissionId"], now), if_match=current["_etag"]
            )
        except errors.PreconditionFailed:
            pass  # changed meanwhile: whoever changed it knew better
        raise BedBeingCleaned(
            f"Bed {bed} is being cleaned; choose a free bed, or mark it "
            "clean on the bed board first."
        )
    try:  # never committed: the hold was a failed command's
        return store.replace(doc, if_match=current["_etag"])
    except errors.PreconditionFailed:
        raise BedOccupied(f"Bed {bed} was just taken; choose a free bed.") from None


def release(store: DocumentStore, reservation: Document) -> None:
    """Undo :func:`reserve` (the command it was for failed)."""
    try:
        store.delete(reservation["partitionKey"], reservation["id"], if_match=reservation["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass


def leave(
    store: DocumentStore, *, ward_id: str, bed: str, admission_id: str, now: datetime | None = None
) -> bool:
    """Set the bed to cleaning if ``admission_id`` still occupies it; True if it did.

    Idempotent: a bed already being cleaned, taken by someone else or free is left as is.
    A concurrent change raises PreconditionFailed (the caller's retry reads it again)."""
    doc = read_bed(store, ward_id, bed)
    if doc is None:
        return False
    c = doc["docContents"]
    if c["state"] != BedState.OCCUPIED or c["admissionId"] != admission_id:
        return False
    store.replace(
        cleaning_doc(ward_id, bed, admission_id, now or datetime.now(UTC)), if_match=doc["_etag"]
    )
    return True


def refresh_occupant(store: DocumentStore, *, ward_id: str, bed: str, occupant: Occupant) -> bool:
    """Rewrite what the board shows of the bed's patient, if that admission occupies it and
    anything changed; True if it wrote."""
    return move_holder(store, ward_id=ward_id, bed=bed, occupant=occupant)


def clean(uow: UnitOfWork, *, ward_id: str, bed: str, actor: Actor, now: datetime) -> None:
    """Free a bed being cleaned: its document goes, a ``BedCleaned`` event naming the actor
    is appended to the ward's stream, in one batch. BedNotBeingCleaned otherwise."""
    pk = ward_pk(ward_id)
    refused = BedNotBeingCleaned(
        f"Bed {bed} is not being cleaned; only a bed whose patient has left is marked clean."
    )
    try:
        doc = uow.get(pk, bed_doc_id(bed))
    except errors.NotFound:
        raise refused from None
    c = doc["docContents"]
    if c["state"] != BedState.CLEANING:
        raise refused
    uow.delete(doc)
    event = BedCleaned(
        ward_id=ward_id, bed=bed, admission_id=c.get("admissionId"), cleaning_since=c.get("since")
    )
    append_events(uow, pk, [(event.event_type, event.payload())], actor=actor.as_dict(), now=now)
    try:
        uow.commit()
    except StaleWrite:  # cleaned (or otherwise changed) by someone else at the same moment
        raise refused from None


def known_bed(ward: dict, bed: str) -> None:
    """UnknownBed unless ``bed`` is one of the ward entry's beds."""
    if bed not in ward.get("beds", []):
        raise UnknownBed(f"Ward {ward.get('code', '')} has no bed {bed}.")


# ------------------------------------------------------------------ the earlier layout
def legacy_pk(ward_id: str, bed: str) -> str:
    return keys.unique("BED", f"{ward_id}.{bed}")


LEGACY_DOC_ID = "bed"


def migrate_legacy(store: DocumentStore, wards: dict[str, dict]) -> int:
    """Move every hold of the earlier layout into its ward's partition; returns how many
    moved. A hold whose patient is still in the bed becomes an occupied bed; one whose
    patient left (its giving back was lost) or that never committed is dropped, as the
    earlier layout let the next admission take it. Idempotent: one point read per bed of
    every ward (``wards``: the Ward entries by code, retired ones too)."""
    moved = 0
    for ward_id, ward in wards.items():
        for bed in ward.get("beds", []):
            old = store.try_read(legacy_pk(ward_id, bed), LEGACY_DOC_ID)
            if old is None:
                continue
            c = old["docContents"]
            if (
                _holder(store, {**old, "docContents": {**c, "wardId": ward_id, "bed": bed}})
                == "active"
            ):
                occupant = _legacy_occupant(store, c["patientId"], c["admissionId"])
                if occupant is not None:
                    try:
                        store.create(occupied_doc(ward_id, bed, occupant, datetime.now(UTC)))
                        moved += 1
                    except errors.Conflict:
                        pass  # moved by an earlier, interrupted run
            try:
                store.delete(old["partitionKey"], LEGACY_DOC_ID, if_match=old["_etag"])
            except (errors.NotFound, errors.PreconditionFailed):
                pass
    return moved


def _legacy_occupant(store: DocumentStore, patient_id: str, admission_id: str) -> Occupant | None:
    pk = keys.patient(patient_id)
    patient = store.try_read(pk, PATIENT_ID)
    admission = store.try_read(pk, admission_doc_id(admission_id))
    if patient is None or admission is None:
        return None
    return Occupant.of(patient_from_doc(patient), admission_from_doc(admission))


def move_holder(store: DocumentStore, *, ward_id: str, bed: str, occupant: Occupant) -> bool:
    """The bed held by ``occupant``'s admission now names ``occupant``'s patient (a stay
    moved to another record by a merge, or back by its undo); True if it wrote. Nothing if
    that admission does not occupy the bed (any more)."""
    doc = read_bed(store, ward_id, bed)
    if doc is None:
        return False
    c = doc["docContents"]
    if c["state"] != BedState.OCCUPIED or c["admissionId"] != occupant.admission_id:
        return False
    if c.get("patientId") == occupant.patient_id and c.get("occupant") == occupant.to_dict():
        return False
    fresh = _doc(ward_id, bed, {**{k: v for k, v in c.items() if k not in ("wardId", "bed")},
                                "patientId": occupant.patient_id,
                                "occupant": occupant.to_dict()})
    store.replace(fresh, if_match=doc["_etag"])
    return True
