"""One ORU^R01 in, one ACK out: read it, claim its control id, find the patient by MRN and
the order by OBR-2, map the values, and complete the order through the results use case
(the one the results form calls) as the lab-system user.

Logs name control ids, outcomes and ERR locations only: never an MRN, a name or a value.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import StaleWrite
from hisadmin.core.actor import Actor
from hisadmin.core.store import new_uow
from hl7v2.inbound import mapping
from hl7v2.inbound.ack import ACCEPT, ERROR, REJECT, Identity, ack
from hl7v2.inbound.oru import (
    APPLICATION_ERROR,
    TABLE_VALUE_NOT_FOUND,
    UNKNOWN_KEY,
    Problem,
    Refusal,
    ResultMessage,
    Unparsable,
    header_fields,
    header_value,
    read,
)
from hl7v2.messages import hl7_timestamp
from hl7v2.persistence import receipts
from patients import use_cases
from patients.domain.errors import DomainError, UnknownOrder, UnknownPatient
from patients.persistence import mrn, queries, reference

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


def _answer(receiver: Receiver, code: str, text: str, message: ResultMessage | None,
            problem: Problem | None = None) -> str:
    fields = header_fields(text)
    control_id = message.control_id if message else header_value(fields, 10)
    ours = Identity(receiver.application, receiver.facility, header_value(fields, 3),
                    header_value(fields, 4))
    log.info("ORU control id %r: %s%s", control_id, code,
             f" {problem.code} at {problem.location}" if problem else "")
    return ack(code, control_id, ours=ours, timestamp=hl7_timestamp(),
               ack_id=f"ACK{control_id}"[:199] if control_id else "ACK",
               processing_id=header_value(fields, 11) or "P",
               version=header_value(fields, 12) or "2.5.1", problem=problem)


def answer_for(receiver: Receiver, code: str, text: str, problem: Problem | None = None
               ) -> str:
    """The ACK ``code`` to ``text`` as read without a parser (its MSH only)."""
    return _answer(receiver, code, text, None, problem)


def handle(receiver: Receiver, text: str) -> str:
    """The ACK for ``text``: AA recorded (or recorded before: a duplicate), AE a Refusal
    or a domain refusal with its ERR, AR when it cannot be read."""
    try:
        message = read(text)
    except Unparsable as problem:
        return _answer(receiver, REJECT, text, None, problem)
    except Refusal as problem:
        return _answer(receiver, ERROR, text, None, problem)
    sender = f"{message.sending_application}^{message.sending_facility}"
    receipt = receipts.claim(receiver.store, sender, message.control_id)
    if receipt.claim == receipts.Claim.RECORDED:
        return _answer(receiver, ACCEPT, text, message)
    if receipt.claim == receipts.Claim.BUSY:
        return _answer(receiver, ERROR, text, message, Refusal(
            "MSH^1^10", RECORD_LOCKED, "This message is being recorded; send it again."))
    try:
        _record(receiver, message, taken_over=receipt.claim == receipts.Claim.TAKEN_OVER)
    except Refusal as problem:
        receipts.give_back(receiver.store, receipt)
        return _answer(receiver, ERROR, text, message, problem)
    except BaseException:
        receipts.give_back(receiver.store, receipt)
        raise
    receipts.recorded(receiver.store, receipt, message.order_id)
    return _answer(receiver, ACCEPT, text, message)


def _order(store: DocumentStore, message: ResultMessage) -> tuple[str, dict[str, Any]]:
    patient_id = mrn.lookup(store, message.mrn)
    if patient_id is None:
        raise Refusal("PID^1^3", UNKNOWN_KEY, "No patient has the MRN in PID-3.")
    try:
        order = queries.order(store, patient_id, message.order_id)
    except (UnknownOrder, UnknownPatient):
        raise Refusal("OBR^1^2", UNKNOWN_KEY,
                      "The patient has no order with the placer order number in OBR-2.") from None
    if order.get("kind") != "lab":
        raise Refusal("OBR^1^2", APPLICATION_ERROR,
                      "The order in OBR-2 is not a lab order: only lab results are taken here.")
    return patient_id, order


def _location(field: str | None, message: ResultMessage) -> tuple[str, str]:
    """ERR-2 and ERR-3 for a domain error on ``field`` (``results.<analyte>[.unit]``)."""
    parts = (field or "").split(".")
    if parts[0] == "results" and len(parts) > 1:
        ob = next((o for o in message.observations if o.code == parts[1]), None)
        if ob is not None:
            return (ob.location(6), TABLE_VALUE_NOT_FOUND) if parts[2:] == ["unit"] else (
                ob.location(5), APPLICATION_ERROR)
    return "OBR^1^2", APPLICATION_ERROR


def _record(receiver: Receiver, message: ResultMessage, *, taken_over: bool) -> None:
    store = receiver.store
    patient_id, order = _order(store, message)
    if taken_over and order.get("status") == "completed" and (
            order.get("results") or {}).get("resultedBy") == receiver.actor.username:
        return  # recorded by the attempt that crashed before marking its receipt
    test = reference.all_of(store, "LabTest").get(order.get("testCode") or "") or {}
    values = mapping.given_values(message.observations, test.get("analytes", []),
                                  reference.all_of(store, "Unit"))
    command = use_cases.CompleteOrder(patient_id, message.order_id, values)
    for attempt in range(STALE_RETRIES):
        try:
            use_cases.complete_order(command, new_uow(), actor=receiver.actor)
            return
        except StaleWrite:
            if attempt == STALE_RETRIES - 1:
                raise Refusal("OBR^1^2", RECORD_LOCKED, "The order kept changing while its "
                              "results were recorded; send the message again.") from None
        except UnknownPatient:
            raise Refusal("PID^1^3", UNKNOWN_KEY, "No patient has the MRN in PID-3.") from None
        except UnknownOrder:
            raise Refusal("OBR^1^2", UNKNOWN_KEY, "The patient has no order with the placer "
                          "order number in OBR-2.") from None
        except DomainError as exc:
            location, code = _location(exc.field, message)
            raise Refusal(location, code, str(exc)) from None
