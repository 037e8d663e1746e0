"""The outbound message profile: a patient event as an HL7 v2.5.1 ADT message.

Built with hl7apy on the v2.5.1 message structures (an element the structure does not have
cannot be added); segment by segment in docs/hl7.md#the-message-profile. Pure: the caller
hands over the event's public form, the patient and the admission as they are when the
message is made, and the interface's settings.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.core import Message

from hl7v2.messages import hl7_timestamp
from hl7v2.outbound.destinations import TRIGGERS
from patients.domain.events import EventType

VERSION = "2.5.1"
# The v2.5.1 message structure of each trigger event (A04 and A08 share A01's).
STRUCTURES = {"A01": "ADT_A01", "A04": "ADT_A01", "A08": "ADT_A01",
              "A02": "ADT_A02", "A03": "ADT_A03", "A40": "ADT_A39"}
MERGE = "A40"  # merge patient – patient identifier list: PID the survivor, MRG the retired
WITH_ALLERGIES = ("A01", "A08")
SEX = {"female": "F", "male": "M", "other": "O", "unknown": "U"}  # HL7 table 0001
# HL7 table 0127 (allergen type) from the Allergen's kind; 0128 (severity) from ours.
ALLERGEN_TYPES = {"ingredient": "DA", "drug_class": "DA", "food": "FA", "environment": "EA",
                  "other": "MA"}
SEVERITIES = {"mild": "MI", "moderate": "MO", "severe": "SV"}
NO_KNOWN_ALLERGY = ("716186003", "No known allergy", "SCT")  # SNOMED CT, as the FHIR facade
VISIT_NUMBER_LENGTH = 12


def visit_number(admission_id: str) -> str:
    """PV1-19: a short visit number for an admission, the same for every message about it
    (12 characters of base32 of SHA-256 of the admission id, prefixed ``V``)."""
    digest = hashlib.sha256(admission_id.encode()).digest()
    return "V" + base64.b32encode(digest).decode()[:VISIT_NUMBER_LENGTH - 1]


def _person(staff_id: str, name: str) -> str:
    """An XCN: ``id^family^given`` from a display name ("Dr Grace Hopper": family Hopper,
    given Grace, prefix Dr in XCN-6)."""
    words = name.split()
    prefix = ""
    if words and words[0].rstrip(".").casefold() in ("dr", "prof", "mr", "mrs", "ms", "mx"):
        prefix = words.pop(0)
    family = words[-1] if words else ""
    given = " ".join(words[:-1])
    return _components(staff_id, family, given, "", "", prefix)


@dataclass(frozen=True)
class Interface:
    """What MSH and PID-3 say of the hospital (settings)."""

    sending_application: str
    sending_facility: str
    assigning_authority: str
    time_zone: str
    processing_id: str = "P"
    receiving_application: str = ""  # MSH-5 (empty: not sent)
    receiving_facility: str = ""  # MSH-6


@dataclass(frozen=True)
class PatientPart:
    mrn: str
    given_name: str
    family_name: str
    birth_date: date
    sex: str
    # active ones, as stored, each with its Allergen's ``kind`` (reference data)
    allergies: tuple[Mapping[str, Any], ...] = ()
    no_known_allergies: bool = False  # "no known allergies" recorded (an explicit AL1)


@dataclass(frozen=True)
class AdmissionPart:
    admission_id: str
    ward_id: str
    bed: str | None
    attending_id: str
    attending_name: str
    started_at: str  # ISO 8601
    ended_at: str | None = None
    prior_ward_id: str | None = None  # a transfer's origin (PV1-6)
    prior_bed: str | None = None


def escape(text: str) -> str:
    """Text as an HL7 value: the delimiters ``|^~\\&`` as escape sequences, line breaks
    as spaces (a carriage return would end the segment)."""
    out = str(text).replace("\\", "\\E\\").replace("|", "\\F\\").replace("^", "\\S\\")
    out = out.replace("&", "\\T\\").replace("~", "\\R\\")
    return " ".join(out.splitlines())


def _components(*parts: str | None) -> str:
    return "^".join(escape(p or "") for p in parts).rstrip("^")


def _ts(iso: str | None, tz: ZoneInfo) -> str:
    return "" if not iso else hl7_timestamp(datetime.fromisoformat(iso), tz)


def trigger_of(event_type: str) -> str | None:
    """The ADT trigger event a patient event is sent as, or None when none."""
    try:
        return TRIGGERS.get(EventType(event_type))
    except ValueError:
        return None


def _header(msg: Message, trigger: str, occurred: str, interface: Interface,
            control_id: str) -> None:
    msg.msh.msh_3 = _components(interface.sending_application)
    msg.msh.msh_4 = _components(interface.sending_facility)
    if interface.receiving_application:
        msg.msh.msh_5 = _components(interface.receiving_application)
    if interface.receiving_facility:
        msg.msh.msh_6 = _components(interface.receiving_facility)
    # the event's time, not the sending's: every attempt sends the very same message
    msg.msh.msh_7 = occurred
    msg.msh.msh_9 = f"ADT^{trigger}^{STRUCTURES[trigger]}"
    msg.msh.msh_10 = control_id
    msg.msh.msh_11 = interface.processing_id
    msg.msh.msh_12 = VERSION
    msg.msh.msh_18 = "UNICODE UTF-8"
    msg.evn.evn_1 = trigger
    msg.evn.evn_2 = occurred


def _mrn(mrn: str, interface: Interface) -> str:
    return _components(mrn, "", "", interface.assigning_authority, "MR")


def _pid(pid: Any, patient: PatientPart, interface: Interface) -> None:
    pid.pid_1 = "1"
    pid.pid_3 = _mrn(patient.mrn, interface)
    pid.pid_5 = _components(patient.family_name, patient.given_name)
    pid.pid_7 = patient.birth_date.strftime("%Y%m%d")
    pid.pid_8 = SEX.get(patient.sex, "U")


def _merge(msg: Message, event: Mapping[str, Any], survivor: PatientPart,
           interface: Interface) -> str:
    """ADT^A40: the surviving patient (PID) and the record merged into it (MRG-1, its MRN
    with the same assigning authority)."""
    group = msg.add_group("ADT_A39_PATIENT")
    _pid(group.pid, survivor, interface)
    group.mrg.mrg_1 = _mrn(str(event["data"]["retired_mrn"]), interface)
    return msg.to_er7()


def build(event: Mapping[str, Any], patient: PatientPart, admission: AdmissionPart | None,
          interface: Interface, control_id: str) -> str:
    """The ER7 text (segments joined by ``\\r``) of the message for ``event`` (its public
    form). ``admission``: the stay the event is about (None for a patient not admitted:
    PV1-2 is then "N", not applicable); for a merge (A40) ``patient`` is the survivor and
    the event names the retired MRN. :class:`ValueError` for an event with no trigger."""
    trigger = trigger_of(str(event["type"]))
    if trigger is None:
        raise ValueError(f"{event['type']} is not sent as ADT")
    tz = ZoneInfo(interface.time_zone)
    occurred = _ts(str(event["occurred_at"]), tz)
    msg = Message(STRUCTURES[trigger], version=VERSION,
                  validation_level=VALIDATION_LEVEL.STRICT)
    _header(msg, trigger, occurred, interface, control_id)
    if trigger == MERGE:
        return _merge(msg, event, patient, interface)
    _pid(msg.pid, patient, interface)
    pv1 = msg.pv1
    pv1.pv1_1 = "1"
    if admission is None:
        pv1.pv1_2 = "N"
    else:
        pv1.pv1_2 = "I"
        pv1.pv1_3 = _components(admission.ward_id, "", admission.bed)
        if admission.prior_ward_id:
            pv1.pv1_6 = _components(admission.prior_ward_id, "", admission.prior_bed)
        if admission.attending_id or admission.attending_name:
            pv1.pv1_7 = _person(admission.attending_id, admission.attending_name)
        pv1.pv1_19 = visit_number(admission.admission_id)
        pv1.pv1_44 = _ts(admission.started_at, tz)
        if admission.ended_at:
            pv1.pv1_45 = _ts(admission.ended_at, tz)
    if trigger in WITH_ALLERGIES:
        for n, allergy in enumerate(patient.allergies, start=1):
            al1 = msg.add_segment("AL1")
            al1.al1_1 = str(n)
            kind = ALLERGEN_TYPES.get(str(allergy.get("kind") or ""))
            if kind:
                al1.al1_2 = kind
            al1.al1_3 = _components(allergy.get("allergenCode") or "",
                                    str(allergy.get("substance") or ""))
            severity = SEVERITIES.get(str(allergy.get("severity") or ""))
            if severity:
                al1.al1_4 = severity
            if allergy.get("reaction"):
                al1.al1_5 = escape(str(allergy["reaction"]))  # whole, escaped: never cut
        if not patient.allergies and patient.no_known_allergies:
            al1 = msg.add_segment("AL1")
            al1.al1_1 = "1"
            al1.al1_3 = _components(*NO_KNOWN_ALLERGY)
    return msg.to_er7()
