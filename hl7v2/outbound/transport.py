"""The MLLP transport of the webhooks' ordered drain (:mod:`webhooks.delivery.drain`): an
event becomes its ADT message, sent on the destination's connection; the ACK decides.

AA is delivered; AE, AR, CE, CR, no answer within ``HL7_ACK_TIMEOUT`` or no connection is a
failure the drain retries with backoff, then dead-letters (the log entry's status
``dead``). Every attempt updates the event's entry in the message log.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import date
from typing import Any

from django.conf import settings

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from hl7v2.outbound import mllp, profile
from hl7v2.outbound.destinations import Destination, control_id
from hl7v2.persistence import store
from patients.events_public import public_event
from patients.persistence.snapshots import RecordSnapshot, read_snapshot
from webhooks.persistence.trackers import HL7_DESTINATION

ACCEPTED = ("AA", "CA")


def interface() -> profile.Interface:
    facility = settings.HL7_SENDING_FACILITY
    return profile.Interface(
        sending_application=settings.HL7_SENDING_APPLICATION,
        sending_facility=facility,
        assigning_authority=settings.HL7_ASSIGNING_AUTHORITY or facility,
        time_zone=str(settings.HOSPITAL_TIME_ZONE),
    )


def ack_timeout() -> float:
    return float(os.environ.get("HL7_ACK_TIMEOUT", "10"))


def _admission(snapshot: RecordSnapshot, data: dict[str, Any],
               event_type: str) -> profile.AdmissionPart | None:
    """The stay the message is about: the event's own (where it says so) or the one active."""
    if event_type == "PatientRegistered":
        return None  # a registration precedes every stay, whenever its message is sent
    wanted = data.get("admission_id")
    stays = [a for a in snapshot.admissions if a.admission_id == wanted] if wanted else [
        a for a in snapshot.admissions if a.status == "active"]
    if not stays:
        return None
    stay = stays[0]
    part = profile.AdmissionPart(
        admission_id=stay.admission_id, ward_id=stay.ward_id, bed=stay.bed,
        attending_id=stay.attending_id, attending_name=stay.attending_name,
        started_at=stay.started_at, ended_at=stay.ended_at)
    # Where the patient was at the event, not where they are now (a later move).
    if event_type == "AdmissionStarted":
        part = replace(part, ward_id=data["ward_id"], bed=data.get("bed"), ended_at=None)
    elif event_type == "PatientTransferred":
        part = replace(part, ward_id=data["to_ward"], bed=data.get("to_bed"), ended_at=None,
                       prior_ward_id=data["from_ward"], prior_bed=data.get("from_bed"))
    elif event_type == "AdmissionEnded":
        part = replace(part, ward_id=data["ward_id"], bed=data.get("bed"),
                       ended_at=data.get("ended_at") or stay.ended_at)
    return part


def message_for(store_: DocumentStore, dest_id: str, stream: str,
                event: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(control id, MRN, message)`` for a stored event to a destination, or None when the
    patient's record is gone. The patient is as the record is now (the event says where the
    stay was at the time)."""
    patient_id = keys.suffix(stream)
    snapshot = read_snapshot(store_, patient_id)
    patient = snapshot.patient
    if patient is None:
        return None
    public = public_event(event, patient_id=patient_id)
    part = profile.PatientPart(
        mrn=patient.mrn, given_name=patient.given_name, family_name=patient.family_name,
        birth_date=patient.birth_date if isinstance(patient.birth_date, date)
        else date.fromisoformat(str(patient.birth_date)),
        sex=patient.sex,
        allergies=tuple(a for a in patient.allergies if (a.get("status") or "active") == "active"))
    cid = control_id(dest_id, stream, int(event["seq"]))
    text = profile.build(public, part, _admission(snapshot, public["data"], public["type"]),
                         interface(), cid)
    return cid, patient.mrn, text


class Hl7Transport:
    """HL7 destinations as receivers of the drain: trackers ``hl7-<destination>``."""

    kind = HL7_DESTINATION
    label = "hl7"

    def find(self, store_: DocumentStore, target_id: str) -> Destination | None:
        return store.find(store_, target_id)

    def send(self, store_: DocumentStore, target: Destination, stream: str,
             event: dict[str, Any]) -> str | None:
        made = message_for(store_, target.id, stream, event)
        if made is None:
            return "patient record not found"
        cid, mrn, text = made
        before = store.find_entry(store_, cid)
        entry = store.LogEntry(
            control_id=cid, destination_id=target.id, stream=stream, seq=int(event["seq"]),
            event_type=str(event["type"]), trigger=profile.trigger_of(str(event["type"])) or "",
            mrn=mrn, status="sending", attempts=(before.attempts if before else 0) + 1,
            reason="", at=store.now_iso())
        store.log_attempt(store_, entry)
        try:
            ack = mllp.connection(target.id, target.host, target.port).exchange(
                text, cid, ack_timeout())
        except mllp.MllpFailed as exc:
            failure = str(exc)
        else:
            failure = None if ack.code in ACCEPTED else f"ACK {ack.code or '(no code)'}"
        store.log_attempt(store_, replace(entry, status="retrying" if failure else "accepted",
                                          reason=failure or "", at=store.now_iso()))
        return failure

    def dead_letter(self, store_: DocumentStore, target: Destination, *, stream: str, seq: int,
                    event_type: str, reason: str, attempts: int) -> None:
        cid = control_id(target.id, stream, seq)
        entry = store.find_entry(store_, cid) or store.LogEntry(
            control_id=cid, destination_id=target.id, stream=stream, seq=seq,
            event_type=event_type, trigger=profile.trigger_of(event_type) or "", mrn="",
            status="dead", attempts=attempts, reason=reason, at=store.now_iso())
        store.log_attempt(store_, replace(entry, status="dead", reason=reason,
                                          at=store.now_iso()))
