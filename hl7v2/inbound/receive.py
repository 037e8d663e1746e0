"""One ORU^R01 in, one ACK out: read it, claim its control id, find the patient by MRN and
the order by OBR-2, map the values, and complete the order through the results use case
(the one the results form calls) as the lab-system user. A bedside monitor's group (OBR-4
the vital-signs panel, or no order in OBR-2 and vital signs' LOINC codes in OBX-3) is
recorded as an observation set instead, through the bedside form's use case, attributed to
the sending system and its monitor.

Logs name control ids, outcomes and ERR locations only: never an MRN, a name or a value.
"""

from __future__ import annotations

import hashlib
import logging
import os
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import Any

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import StaleWrite
from hisadmin.core.actor import Actor
from hisadmin.core.store import new_uow
from hl7v2.inbound import mapping, vitals
from hl7v2.inbound.ack import ACCEPT, ERROR, REJECT, Identity, ack, answer_code
from hl7v2.inbound.oru import (
    APPLICATION_ERROR,
    DUPLICATE_KEY,
    SEGMENT_SEQUENCE_ERROR,
    TABLE_VALUE_NOT_FOUND,
    UNKNOWN_KEY,
    OrderResult,
    Problem,
    Refusal,
    ResultMessage,
    SystemProblem,
    Unparsable,
    header_fields,
    header_value,
    normalise,
    read,
)
from hl7v2.messages import hl7_timestamp
from hl7v2.persistence import receipts
from patients import use_cases
from patients.domain import observations as observation_rules
from patients.domain.errors import DomainError, UnknownOrder, UnknownPatient
from patients.domain.results import PRELIMINARY
from patients.persistence import mrn, queries, reference
from patients.use_cases import observations as observation_sets

log = logging.getLogger("hl7v2.inbound")
STALE_RETRIES = 3  # a concurrent change to the record: load and try again
RECORD_LOCKED = "206"  # HL7 0357: application record locked


@dataclass(frozen=True)
class Receiver:
    """What answering needs: the store, the lab-system actor, our MSH-3/4."""

    store: DocumentStore
    actor: Actor
    application: str = "HIS"
    facility: str = "HOSPITAL"
    time_zone: tzinfo | None = None  # the ACKs' MSH-7 (the hospital's zone; UTC when None)
    # MSH-3^MSH-4 of the senders taken (HL7_LISTENER_SENDERS); empty: any sender
    senders: frozenset[str] = frozenset()


def _answer(receiver: Receiver, code: str, text: str, message: ResultMessage | None,
            problem: Problem | None = None) -> str | None:
    """The acknowledgement, in the mode the sender asked for (None: MSH-15 says not to
    answer this outcome)."""
    fields = header_fields(text)
    control_id = message.control_id if message else header_value(fields, 10)
    ours = Identity(receiver.application, receiver.facility, header_value(fields, 3),
                    header_value(fields, 4))
    answered = answer_code(code, header_value(fields, 15))
    log.info("ORU control id %r: %s%s", control_id, answered or f"{code} (not answered)",
             f" {problem.code} at {problem.location}" if problem else "")
    if answered is None:
        return None
    return ack(answered, control_id, ours=ours,
               timestamp=hl7_timestamp(tz=receiver.time_zone),
               ack_id=f"ACK{control_id}"[:20] if control_id else "ACK",
               processing_id=header_value(fields, 11) or "P",
               version=header_value(fields, 12) or "2.5.1", problem=problem)


PARSE_SECONDS = 2.0  # the longest a message may take to read (HL7_LISTENER_PARSE_SECONDS)
_readers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hl7-read")


def parse_seconds() -> float:
    return float(os.environ.get("HL7_LISTENER_PARSE_SECONDS", str(PARSE_SECONDS)))


def read_within(text: str, seconds: float) -> ResultMessage:
    """:func:`read` with a time limit: a message that takes longer to read is Unparsable
    (AR) at the limit, whatever the parser still does with it (the size limits keep that
    short; this bounds what they miss)."""
    future = _readers.submit(read, text)
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        future.cancel()
        raise Unparsable("MSH", SEGMENT_SEQUENCE_ERROR, f"The message took longer than "
                         f"{seconds:g} s to read; it is not taken.") from None


def content_digest(text: str) -> str:
    """What a message says, as a digest: its segments after MSH (an engine's resend may
    stamp a new MSH-7), whatever line ends it was sent with."""
    body = "\r".join(normalise(text).split("\r")[1:])
    return hashlib.sha256(body.encode()).hexdigest()[:32]


def answer_for(receiver: Receiver, code: str, text: str, problem: Problem | None = None
               ) -> str | None:
    """The ACK ``code`` to ``text`` as read without a parser (its MSH only)."""
    return _answer(receiver, code, text, None, problem)


def handle(receiver: Receiver, text: str) -> str | None:
    """The ACK for ``text``: AA recorded (or recorded before: a duplicate), AE a Refusal
    or a domain refusal with its ERR (the content), AR when it cannot be read or is not
    taken at all, or for a system problem (then resent later)."""
    try:
        message = read_within(text, parse_seconds())
    except Unparsable as problem:
        return _answer(receiver, REJECT, text, None, problem)
    except Refusal as problem:
        return _answer(receiver, ERROR, text, None, problem)
    sender = f"{message.sending_application}^{message.sending_facility}"
    if receiver.senders and sender not in receiver.senders:
        return _answer(receiver, REJECT, text, message, Unparsable(
            "MSH^1^3", UNKNOWN_KEY, "This sending application and facility (MSH-3, MSH-4) "
            "is not one the listener takes results from."))
    receipt = receipts.claim(receiver.store, sender, message.control_id, content_digest(text))
    if receipt.claim == receipts.Claim.RECORDED:
        return _answer(receiver, ACCEPT, text, message)
    if receipt.claim == receipts.Claim.REUSED:
        return _answer(receiver, ERROR, text, message, Refusal(
            "MSH^1^10", DUPLICATE_KEY, "This control id (MSH-10) was recorded before with "
            "other content: give every message its own control id. Nothing was recorded."))
    if receipt.claim == receipts.Claim.BUSY:
        return _answer(receiver, REJECT, text, message, SystemProblem(
            "MSH^1^10", RECORD_LOCKED, "This message is being recorded on another "
            "connection; send it again later."))
    try:
        # a claim taken over may have been recorded already: the use case records the same
        # results once only
        _record(receiver, message)
    except Refusal as problem:
        receipts.give_back(receiver.store, receipt)
        return _answer(receiver, ERROR, text, message, problem)
    except SystemProblem as problem:
        receipts.give_back(receiver.store, receipt)
        return _answer(receiver, REJECT, text, message, problem)
    except BaseException:
        receipts.give_back(receiver.store, receipt)
        raise
    receipts.recorded(receiver.store, receipt, message.order_id)
    return _answer(receiver, ACCEPT, text, message)


def _patient(store: DocumentStore, message: ResultMessage) -> str:
    patient_id = mrn.lookup(store, message.mrn)
    if patient_id is None:
        raise Refusal("PID^1^3", UNKNOWN_KEY, "No patient has the MRN in PID-3.")
    _check_identity(store, patient_id, message)
    return patient_id


def _order(store: DocumentStore, patient_id: str, group: OrderResult) -> dict[str, Any]:
    try:
        order = queries.order(store, patient_id, group.order_id)
    except (UnknownOrder, UnknownPatient):
        raise Refusal(group.location(2), UNKNOWN_KEY,
                      "The patient has no order with the placer order number in OBR-2.") from None
    if order.get("kind") != "lab":
        raise Refusal(group.location(2), APPLICATION_ERROR,
                      "The order in OBR-2 is not a lab order: only lab results are taken here.")
    return order


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def _check_identity(store: DocumentStore, patient_id: str, message: ResultMessage) -> None:
    """PID-5 (family and given name) and PID-7 (birth date), when the message gives them,
    must be the record's: a result meant for another patient is refused (AE), not filed."""
    record = queries.patient(store, patient_id)
    if message.family_name and (
            _folded(message.family_name) != _folded(str(record.get("familyName") or ""))
            or (message.given_name and _folded(message.given_name)
                != _folded(str(record.get("givenName") or "")))):
        raise Refusal("PID^1^5", UNKNOWN_KEY, "The name in PID-5 is not the name of the "
                      "patient with the MRN in PID-3.")
    born = str(record.get("birthDate") or "").replace("-", "")
    if message.birth_date and message.birth_date != born:
        raise Refusal("PID^1^7", UNKNOWN_KEY, "The birth date in PID-7 is not the birth date "
                      "of the patient with the MRN in PID-3.")


def _location(field: str | None, group: OrderResult) -> tuple[str, str]:
    """ERR-2 and ERR-3 for a domain error on ``field`` (``results.<analyte>[.unit]``)."""
    parts = (field or "").split(".")
    if parts[0] == "results" and len(parts) > 1:
        ob = next((o for o in group.observations if o.code == parts[1]), None)
        if ob is not None:
            return (ob.location(6), TABLE_VALUE_NOT_FOUND) if parts[2:] == ["unit"] else (
                ob.location(5), APPLICATION_ERROR)
    return group.location(2), APPLICATION_ERROR


def _command(receiver: Receiver, patient_id: str, group: OrderResult
             ) -> use_cases.RecordLabResults:
    """The use case's command for one order of the message (every OBX mapped: a Refusal
    naming the field otherwise)."""
    store = receiver.store
    order = _order(store, patient_id, group)
    test = reference.all_of(store, "LabTest").get(order.get("testCode") or "") or {}
    status = mapping.status_of(group.observations)
    values = mapping.given_values(group.observations, test.get("analytes", []),
                                  reference.all_of(store, "Unit"),
                                  partial=status == PRELIMINARY, time_zone=receiver.time_zone)
    return use_cases.RecordLabResults(
        patient_id, group.order_id, values, status=status,
        observed_at=mapping.observed_at(group.observed_at, receiver.time_zone),
        comments=group.comments)


@dataclass(frozen=True)
class _Monitored:
    """A monitor's set ready to record: the command, what the group said, who sent it."""

    command: observation_sets.RecordObservations
    signs: vitals.VitalSigns
    actor: Actor


def _monitored(receiver: Receiver, message: ResultMessage, patient_id: str,
               group: OrderResult) -> _Monitored:
    """The observation set of a monitor's group, checked as the use case will check it
    (values and time), so that a refused set refuses the message before anything is
    recorded."""
    signs = vitals.vital_signs(group, receiver.time_zone)
    try:
        observation_rules.checked(signs.values)
        observation_sets.taken_at_checked(signs.taken_at or None, datetime.now(UTC))
    except DomainError as exc:
        location, code = vitals.location(exc.field, group, signs)
        raise Refusal(location, code, str(exc)) from None
    system = f"{message.sending_application}^{message.sending_facility}"
    named = ", ".join(signs.devices) or message.sending_application
    actor = replace(receiver.actor, display_name=f"Monitor {named} ({system})")
    source = {"system": system, "devices": list(signs.devices),
              "controlId": message.control_id}
    key = hashlib.sha256(f"{system}|{message.control_id}|{group.position}".encode())
    return _Monitored(observation_sets.RecordObservations(
        patient_id, signs.values, signs.taken_at or None, source=source,
        key=key.hexdigest()[:8]), signs, actor)


def _record(receiver: Receiver, message: ResultMessage) -> None:
    """Every order of the message, each through the results use case (a monitor's set
    through the observations' one); all are mapped and checked before the first is
    recorded, so a refused order records none of them."""
    patient_id = _patient(receiver.store, message)
    commands = [(group, _monitored(receiver, message, patient_id, group) if group.vital_signs
                 else _command(receiver, patient_id, group)) for group in message.orders]
    for group, command in commands:
        if isinstance(command, _Monitored):
            _record_set(group, command)
        else:
            _record_one(receiver, group, command)


def _record_set(group: OrderResult, monitored: _Monitored) -> None:
    try:
        observation_sets.record_observations_again_on_a_race(
            monitored.command, new_uow, actor=monitored.actor)
    except StaleWrite:
        raise SystemProblem(group.location(7), RECORD_LOCKED, "The patient's record kept "
                            "changing while the set was recorded; send the message again "
                            "later.") from None
    except UnknownPatient:
        raise Refusal("PID^1^3", UNKNOWN_KEY, "No patient has the MRN in PID-3.") from None
    except DomainError as exc:
        location, code = vitals.location(exc.field, group, monitored.signs)
        raise Refusal(location, code, str(exc)) from None


def _record_one(receiver: Receiver, group: OrderResult,
                command: use_cases.RecordLabResults) -> None:
    for attempt in range(STALE_RETRIES):
        try:
            use_cases.record_lab_results(command, new_uow(), actor=receiver.actor)
            return
        except StaleWrite:
            if attempt == STALE_RETRIES - 1:
                raise SystemProblem(group.location(2), RECORD_LOCKED, "The order kept "
                                    "changing while its results were recorded; send the "
                                    "message again later.") from None
        except UnknownPatient:
            raise Refusal("PID^1^3", UNKNOWN_KEY, "No patient has the MRN in PID-3.") from None
        except UnknownOrder:
            raise Refusal(group.location(2), UNKNOWN_KEY, "The patient has no order with the "
                          "placer order number in OBR-2.") from None
        except DomainError as exc:
            location, code = _location(exc.field, group)
            raise Refusal(location, code, str(exc)) from None
