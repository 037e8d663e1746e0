"""The MLLP transport of the webhooks' ordered drain (:mod:`webhooks.delivery.drain`): an
event becomes its ADT message, sent on the destination's connection; the ACK decides.

AA (CA) is delivered. AE (CE), no answer within ``HL7_ACK_TIMEOUT`` or no connection is a
failure the drain retries with backoff within the retry budget (``HL7_RETRY_BUDGET``); AR
(CR) is final at once (the engine rejected the message itself: the same message would be
rejected again). A spent budget dead-letters the message (the log entry's status ``dead``)
and holds the patient's stream for that destination (:meth:`Hl7Transport.hold`: a marker
of consumer ``hl7-delivery``) until the message is replayed. Every attempt updates the
event's entry in the message log.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import date
from typing import Any

from django.conf import settings

from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams, keys
from hisadmin.core.recent_events import read_events
from hl7v2.outbound import as_of, mllp, profile
from hl7v2.outbound.destinations import Destination, control_id
from hl7v2.persistence import store
from patients.domain.events import EventType
from patients.domain.records import read_allergy
from patients.events_public import public_event
from patients.persistence import reference
from patients.persistence.snapshots import RecordSnapshot, read_snapshot
from webhooks.delivery.drain import FinalFailure
from webhooks.persistence.trackers import HL7_DESTINATION

ACCEPTED = ("AA", "CA")
REJECTED = ("AR", "CR")  # final: the message itself is refused, resending repeats it


def interface() -> profile.Interface:
    facility = settings.HL7_SENDING_FACILITY
    return profile.Interface(
        sending_application=settings.HL7_SENDING_APPLICATION,
        sending_facility=facility,
        receiving_application=getattr(settings, "HL7_RECEIVING_APPLICATION", ""),
        receiving_facility=getattr(settings, "HL7_RECEIVING_FACILITY", ""),
        assigning_authority=settings.HL7_ASSIGNING_AUTHORITY or facility,
        time_zone=str(settings.HOSPITAL_TIME_ZONE),
    )


def ack_timeout() -> float:
    return float(os.environ.get("HL7_ACK_TIMEOUT", "10"))


def _admission(stays: list[as_of.StayState], data: dict[str, Any],
               event_type: str) -> profile.AdmissionPart | None:
    """The stay the message is about, as it was at the event: the event's own (where it says
    so) or the one active then."""
    if event_type == "PatientRegistered":
        return None  # a registration precedes every stay, whenever its message is sent
    wanted = data.get("admission_id")
    found = [a for a in stays if a.admission_id == wanted] if wanted else [
        a for a in stays if a.status == "active"]
    if not found:
        return None
    stay = found[0]
    part = profile.AdmissionPart(
        admission_id=stay.admission_id, ward_id=stay.ward_id, bed=stay.bed,
        attending_id=stay.attending_id, attending_name=stay.attending_name,
        started_at=stay.started_at, ended_at=stay.ended_at)
    # Where the patient was at the event, as the event says.
    if event_type == "AdmissionStarted":
        part = replace(part, ward_id=data["ward_id"], bed=data.get("bed"), ended_at=None)
    elif event_type == "PatientTransferred":
        part = replace(part, ward_id=data["to_ward"], bed=data.get("to_bed"), ended_at=None,
                       prior_ward_id=data["from_ward"], prior_bed=data.get("from_bed"))
    elif event_type == "AdmissionEnded":
        part = replace(part, ward_id=data["ward_id"], bed=data.get("bed"),
                       ended_at=data.get("ended_at") or stay.ended_at)
    return part


def _as_of(store_: DocumentStore, snapshot: RecordSnapshot, stream: str, seq: int
           ) -> tuple[as_of.PatientState, list[as_of.StayState]] | None:
    """The patient and their stays as they were at event ``seq`` (the record now, with the
    later events undone)."""
    patient = snapshot.patient
    if patient is None:
        return None
    now = as_of.PatientState(
        given_name=patient.given_name, family_name=patient.family_name,
        birth_date=patient.birth_date.isoformat() if isinstance(patient.birth_date, date)
        else str(patient.birth_date), sex=patient.sex,
        allergies=tuple(read_allergy(a) for a in patient.allergies),
        no_known_allergies=bool(patient.no_known_allergies))
    stays = [as_of.StayState(
        admission_id=a.admission_id, ward_id=a.ward_id, bed=a.bed, attending_id=a.attending_id,
        attending_name=a.attending_name, started_at=a.started_at, ended_at=a.ended_at,
        status=str(a.status)) for a in snapshot.admissions]
    later = list(read_events(store_, stream, range(seq + 1, snapshot.seq + 1)).values())
    then, stays_then = as_of.rewind(now, stays, later)
    if (not then.no_known_allergies and any(e["type"] == "AllergyAdded" for e in later)
            and not any(a.get("status") == "active" for a in then.allergies)):
        # an allergy added later ended a "no known allergies" that may have stood then
        earlier = read_events(store_, stream, range(1, seq + 1))
        then = as_of.replace(then, no_known_allergies=as_of.no_known_allergies_at(
            earlier.values()))
    return then, stays_then


def message_for(store_: DocumentStore, dest_id: str, stream: str,
                event: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(control id, MRN, message)`` for a stored event to a destination, or None when the
    patient's record is gone. Built from the event and the record as of the event's
    position (:mod:`hl7v2.outbound.as_of`): a backlog, replay or outage never changes what
    a message says."""
    patient_id = keys.suffix(stream)
    if event["type"] == EventType.PATIENT_MERGED:
        return _merge_message(store_, dest_id, stream, event)
    snapshot = read_snapshot(store_, patient_id)
    seq = int(event["seq"])
    then = _as_of(store_, snapshot, stream, seq)
    if then is None or snapshot.patient is None:
        return None
    state, stays = then
    public = public_event(event, patient_id=patient_id)
    kinds = {code: str(entry.get("kind") or "")
             for code, entry in reference.all_of(store_, "Allergen").items()}
    part = profile.PatientPart(
        mrn=snapshot.patient.mrn, given_name=state.given_name, family_name=state.family_name,
        birth_date=date.fromisoformat(state.birth_date), sex=state.sex,
        allergies=tuple({**a, "kind": kinds.get(str(a.get("allergenCode") or ""), "")}
                        for a in state.allergies if a.get("status") == "active"),
        no_known_allergies=state.no_known_allergies)
    cid = control_id(dest_id, stream, seq)
    text = profile.build(public, part, _admission(stays, public["data"], public["type"]),
                         interface(), cid)
    return cid, snapshot.patient.mrn, text


def _merge_message(store_: DocumentStore, dest_id: str, stream: str,
                   event: dict[str, Any]) -> tuple[str, str, str] | None:
    """ADT^A40 for a merge (its event is in the retired record's stream): PID the survivor
    as it is now — the record the receiver keeps —, MRG the retired MRN."""
    survivor = read_snapshot(store_, str(event["data"]["survivorId"])).patient
    if survivor is None:
        return None
    part = profile.PatientPart(mrn=survivor.mrn, given_name=survivor.given_name,
                               family_name=survivor.family_name,
                               birth_date=survivor.birth_date, sex=survivor.sex)
    cid = control_id(dest_id, stream, int(event["seq"]))
    public = public_event(event, patient_id=keys.suffix(stream))
    return cid, survivor.mrn, profile.build(public, part, None, interface(), cid)


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
            failure = (None if ack.code in ACCEPTED
                       else FinalFailure(f"ACK {ack.code}") if ack.code in REJECTED
                       else f"ACK {ack.code or '(no code)'}")
        store.log_attempt(store_, replace(entry, status="retrying" if failure else "accepted",
                                          reason=failure or "", at=store.now_iso()))
        return failure

    def hold(self, store_: DocumentStore, target: Destination, *, stream: str, seq: int,
             event: dict[str, Any], reason: str) -> None:
        """Make a held delivery visible: a held-stream marker (``/healthz`` 503,
        ``check_worklists``, ``hl7_status``) released by replaying the message."""
        held_streams.hold(store_, stream_pk=stream, seq=seq, event_type=str(event["type"]),
                          occurred_at=event.get("occurredAt"), consumer=held_streams.HL7_DELIVERY,
                          reason=f"{target.name}: {reason}")

    def dead_letter(self, store_: DocumentStore, target: Destination, *, stream: str, seq: int,
                    event_type: str, reason: str, attempts: int) -> None:
        cid = control_id(target.id, stream, seq)
        entry = store.find_entry(store_, cid) or store.LogEntry(
            control_id=cid, destination_id=target.id, stream=stream, seq=seq,
            event_type=event_type, trigger=profile.trigger_of(event_type) or "", mrn="",
            status="dead", attempts=attempts, reason=reason, at=store.now_iso())
        store.log_attempt(store_, replace(entry, status="dead", reason=reason,
                                          at=store.now_iso()))
