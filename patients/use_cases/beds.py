"""Beds after the command: cleaning after a patient leaves, marking clean, the board's
view of the patient kept current.

Setting a bed to cleaning runs after a discharge or a transfer out, fed by its event (see
:mod:`patients.tasks`), so those commands write nothing to the ward's partition on their own
path. It is idempotent (only the hold of that very admission changes), and a hold whose
follow-up is late or lost is set to cleaning by the next admission that tries the bed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend.envelope import etag
from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.beds import Occupant
from patients.domain.errors import PatientMerged, UnknownWard
from patients.domain.events import EventType
from patients.persistence import beds, reference, setup_marks
from patients.persistence.repository import PatientRecords

# The events after which a bed may have been left, as the relay's consumers filter them.
BED_LEAVING_EVENTS = (EventType.ADMISSION_ENDED, EventType.PATIENT_TRANSFERRED)
# The events that change what a bed card shows of its patient.
OCCUPANT_EVENTS = (
    EventType.DEMOGRAPHICS_UPDATED,
    EventType.ALLERGY_ADDED,
    EventType.ALLERGY_REMOVED,
    EventType.NO_KNOWN_ALLERGIES_RECORDED,
)
BED_EVENTS = (*BED_LEAVING_EVENTS, *OCCUPANT_EVENTS)
MIGRATION_STEP = "beds-by-ward"


@dataclass(frozen=True)
class BedLeft:
    ward_id: str
    bed: str
    admission_id: str


@dataclass(frozen=True)
class MarkBedClean:
    ward_id: str
    bed: str
    expected_version: str | None = None  # the ETag of the bed's hold (the board gives it)


@dataclass(frozen=True)
class RefreshOccupant:
    patient_id: str


def ward_entry(store: DocumentStore, ward_id: str) -> dict[str, Any]:
    """The ward's reference entry (retired ones too: their beds may still be held);
    UnknownWard if there is none."""
    ward = reference.all_of(store, "Ward").get(ward_id)
    if ward is None:
        raise UnknownWard(f"There is no ward {ward_id!r}.")
    return ward


def bed_left(event_type: str, data: dict[str, Any]) -> BedLeft | None:
    """The bed an event's admission left, if any."""
    if event_type == EventType.ADMISSION_ENDED and data.get("bed"):
        return BedLeft(data["wardId"], data["bed"], data["admissionId"])
    if event_type == EventType.PATIENT_TRANSFERRED and data.get("fromBed"):
        if (data.get("toWard"), data.get("toBed")) != (data.get("fromWard"), data["fromBed"]):
            return BedLeft(data["fromWard"], data["fromBed"], data["admissionId"])
    return None


def set_bed_to_cleaning(cmd: BedLeft, uow: UnitOfWork, *, actor: Actor) -> bool:
    """The bed the admission left goes to cleaning (nothing if someone else holds it now,
    or it is already being cleaned). No event: the patient's own discharge or transfer
    event, in their stream, says who made them leave."""
    return beds.leave(uow.store, ward_id=cmd.ward_id, bed=cmd.bed, admission_id=cmd.admission_id)


def mark_bed_clean(cmd: MarkBedClean, uow: UnitOfWork, *, actor: Actor) -> None:
    """A nurse or a clerk marks a bed being cleaned as clean: it is free again.

    Audited: a ``BedCleaned`` event naming ``actor`` in the ward's stream, in the same batch
    that frees the bed. UnknownWard / UnknownBed (404), BedNotBeingCleaned (409), StaleWrite
    (412) when the bed's hold is not at ``expected_version`` (or is gone: the bed is free)."""
    beds.known_bed(ward_entry(uow.store, cmd.ward_id), cmd.bed)
    if cmd.expected_version is not None:
        pk, doc_id = beds.ward_pk(cmd.ward_id), beds.bed_doc_id(cmd.bed)
        held = uow.try_get(pk, doc_id)  # tracked: the clean below deletes this very version
        if held is None or etag(held) != cmd.expected_version:
            raise StaleWrite(pk, doc_id)
    for attempt in range(3):
        try:
            beds.clean(
                uow if attempt == 0 else UnitOfWork(uow.store),
                ward_id=cmd.ward_id,
                bed=cmd.bed,
                actor=actor,
                now=datetime.now(UTC),
            )
            return
        except StaleWrite:  # another bed of the ward was cleaned at once: the stream moved
            if attempt == 2:
                raise


def refresh_occupant(cmd: RefreshOccupant, uow: UnitOfWork, *, actor: Actor) -> bool:
    """Bring what the patient's bed card shows (name, sex, birth date, allergy flag) up to
    the record; True if the card changed. A record merged into another (or being merged)
    has no bed of its own: its stay, bed and all, is the survivor's."""
    try:
        record = PatientRecords(uow).load(cmd.patient_id)
    except PatientMerged:
        return False
    stay = record.admission
    if stay is None or not stay.bed:
        return False
    return beds.refresh_occupant(
        uow.store, ward_id=stay.ward_id, bed=stay.bed, occupant=Occupant.of(record.patient, stay)
    )


def migrate_bed_holds(uow: UnitOfWork, *, actor: Actor) -> Iterator[str]:
    """Move bed holds of the per-bed layout into their wards' partitions, once per store."""
    store = uow.store
    if setup_marks.is_done(store, MIGRATION_STEP):
        return
    moved = beds.migrate_legacy(store, reference.all_of(store, "Ward"))
    setup_marks.mark_done(store, MIGRATION_STEP)
    yield f"bed holds moved to their wards: {moved}"
