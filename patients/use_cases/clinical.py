"""Use cases for the rest of the record: demographics, allergies, transfers and orders.

Each loads what it needs through the unit of work, applies the domain rule, appends its
events and commits ONE batch in the patient's partition. ``expected_etag`` is the version a
form or If-Match was based on: a stale one raises StaleWrite and nothing is written.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from cosmos_backend import errors, keys
from cosmos_backend.outbox import append_events
from cosmos_backend.store import Cond, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.errors import InvalidInput, NotAdmitted, UnknownOrder
from patients.domain.orders import PLACED_EVENT, Order
from patients.persistence import beds, reference
from patients.persistence.documents import (
    admission_from_doc,
    admission_to_doc,
    order_contents,
    order_doc_id,
    order_from_doc,
    order_to_doc,
    patient_to_doc,
)
from patients.use_cases.admissions import active_admission_doc, load_patient


def _now() -> datetime:
    return datetime.now(UTC)


def _keep_etag(new: dict, old: dict) -> dict:
    new["_etag"] = old["_etag"]
    return new


# ------------------------------------------------------------------ demographics, allergies
@dataclass(frozen=True)
class UpdateDemographics:
    patient_id: str
    given_name: str
    family_name: str
    birth_date: date
    sex: str
    expected_etag: str | None = None


def update_demographics(cmd: UpdateDemographics, uow: UnitOfWork, *, actor: Actor) -> None:
    now = _now()
    patient, doc = load_patient(uow, cmd.patient_id)
    uow.expect_etag(doc, cmd.expected_etag)
    changes = patient.correct(given_name=cmd.given_name, family_name=cmd.family_name,
                              birth_date=cmd.birth_date, sex=cmd.sex, now=now)
    if not changes:
        return  # nothing changed: no write, no event
    uow.update(_keep_etag(patient_to_doc(patient), doc))
    append_events(uow, keys.patient(cmd.patient_id), [("PatientDemographicsUpdated", changes)],
                  actor=actor.as_dict(), now=now)
    uow.commit()


@dataclass(frozen=True)
class AddAllergy:
    patient_id: str
    substance: str
    reaction: str
    severity: str
    expected_etag: str | None = None


def add_allergy(cmd: AddAllergy, uow: UnitOfWork, *, actor: Actor) -> str:
    now = _now()
    patient, doc = load_patient(uow, cmd.patient_id)
    uow.expect_etag(doc, cmd.expected_etag)
    allergy = patient.add_allergy(allergy_id=str(uuid.uuid4()), substance=cmd.substance,
                                  reaction=cmd.reaction, severity=cmd.severity, now=now,
                                  by=actor.username)
    uow.update(_keep_etag(patient_to_doc(patient), doc))
    append_events(uow, keys.patient(cmd.patient_id), [("AllergyAdded", allergy)],
                  actor=actor.as_dict(), now=now)
    uow.commit()
    return allergy["allergyId"]


@dataclass(frozen=True)
class RemoveAllergy:
    patient_id: str
    allergy_id: str
    expected_etag: str | None = None


def remove_allergy(cmd: RemoveAllergy, uow: UnitOfWork, *, actor: Actor) -> None:
    now = _now()
    patient, doc = load_patient(uow, cmd.patient_id)
    uow.expect_etag(doc, cmd.expected_etag)
    removed = patient.remove_allergy(cmd.allergy_id, now=now)
    uow.update(_keep_etag(patient_to_doc(patient), doc))
    append_events(uow, keys.patient(cmd.patient_id), [("AllergyRemoved", {
        "allergyId": cmd.allergy_id, "substance": removed["substance"]})], actor=actor.as_dict(), now=now)
    uow.commit()


# ------------------------------------------------------------------ transfer
@dataclass(frozen=True)
class TransferPatient:
    patient_id: str
    ward_id: str
    bed: str = ""
    expected_etag: str | None = None


def transfer_patient(cmd: TransferPatient, uow: UnitOfWork, *, actor: Actor) -> None:
    """Move the active admission; the new bed is reserved first and the old one freed last."""
    now = _now()
    store = uow.store
    ward = reference.get(store, "Ward", cmd.ward_id, field="ward_id")
    bed = cmd.bed.strip() or None
    if bed and bed not in ward.get("beds", []):
        raise InvalidInput(f"Ward {cmd.ward_id} has no bed {bed}; choose one of its beds.",
                           field="bed")
    load_patient(uow, cmd.patient_id)
    doc = active_admission_doc(uow, cmd.patient_id)
    if doc is None:
        raise NotAdmitted("Only an admitted patient can be transferred; admit them first.")
    uow.expect_etag(doc, cmd.expected_etag)
    adm = admission_from_doc(doc)
    old_ward, old_bed = adm.ward_id, adm.bed
    move = adm.transfer(ward_id=cmd.ward_id, department_id=ward["departmentId"], bed=bed,
                        now=now, by=actor.username)
    reservation = None
    if bed:
        reservation = beds.reserve(store, ward_id=cmd.ward_id, bed=bed,
                                   patient_id=cmd.patient_id, admission_id=adm.admission_id)
    try:
        uow.update(_keep_etag(admission_to_doc(adm), doc))
        append_events(uow, keys.patient(cmd.patient_id), [("PatientTransferred", {
            "admissionId": adm.admission_id, **move})], actor=actor.as_dict(), now=now)
        uow.commit()
    except BaseException:
        if reservation is not None:
            beds.release(store, reservation)
        raise
    if old_bed:
        beds.free(store, ward_id=old_ward, bed=old_bed, admission_id=adm.admission_id)


# ------------------------------------------------------------------ orders
@dataclass(frozen=True)
class PlaceOrder:
    patient_id: str
    kind: str  # medication | imaging | lab
    urgency: str = "routine"
    medication_code: str = ""
    dose: Decimal | None = None
    unit: str = ""
    route: str = ""
    frequency: str = ""
    start_at: str = ""
    end_at: str = ""
    as_needed: bool = False
    modality: str = ""
    body_part: str = ""
    test_code: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _order_details(cmd: PlaceOrder, store: Any) -> tuple[str, dict[str, Any]]:
    if cmd.kind == "medication":
        med = reference.get(store, "Medication", cmd.medication_code, field="medication_code")
        reference.get(store, "Unit", cmd.unit, field="unit")
        reference.get(store, "Route", cmd.route, field="route")
        reference.get(store, "Frequency", cmd.frequency, field="frequency")
        if cmd.dose is None or cmd.dose <= 0:
            raise InvalidInput("Give a positive dose.", field="dose")
        if cmd.end_at and cmd.start_at and cmd.end_at < cmd.start_at:
            raise InvalidInput("The end must be after the start.", field="end_at")
        dose = format(cmd.dose.normalize(), "f")
        prn = " PRN" if cmd.as_needed else ""
        return (f"{med['name']} {dose} {cmd.unit} {cmd.route} {cmd.frequency}{prn}", {
            "medicationCode": cmd.medication_code, "medicationName": med["name"],
            "dose": dose, "unit": cmd.unit, "route": cmd.route, "frequency": cmd.frequency,
            "startAt": cmd.start_at or None, "endAt": cmd.end_at or None,
            "asNeeded": cmd.as_needed})
    if cmd.kind == "imaging":
        modality = reference.get(store, "Modality", cmd.modality, field="modality")
        part = reference.get(store, "BodyPart", cmd.body_part, field="body_part")
        return (f"{cmd.modality} {part['name']}",
                {"modality": cmd.modality, "modalityName": modality["name"],
                 "bodyPart": cmd.body_part})
    if cmd.kind == "lab":
        test = reference.get(store, "LabTest", cmd.test_code, field="test_code")
        return test["name"], {"testCode": cmd.test_code, "testName": test["name"]}
    raise InvalidInput("Order kind must be medication, imaging or lab.", field="kind")


def place_order(cmd: PlaceOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    now = _now()
    description, details = _order_details(cmd, uow.store)
    load_patient(uow, cmd.patient_id)
    adm_doc = active_admission_doc(uow, cmd.patient_id)
    if adm_doc is None:
        raise NotAdmitted("Orders need an active admission; admit the patient first.")
    adm = adm_doc["docContents"]
    if cmd.note:
        details["note"] = " ".join(cmd.note.split())[:500]
    order = Order.place(kind=cmd.kind, urgency=cmd.urgency, order_id=str(uuid.uuid4()),
                        patient_id=cmd.patient_id, admission_id=adm["admissionId"],
                        description=description, department_id=adm["departmentId"],
                        ward_id=adm["wardId"], placed_at=now.isoformat(), placed_by=actor.id,
                        details=details)
    uow.add(order_to_doc(order))
    append_events(uow, keys.patient(cmd.patient_id),
                  [(PLACED_EVENT[cmd.kind], order_contents(order))], actor=actor.as_dict(), now=now)
    uow.commit()
    return order


def _load_order(uow: UnitOfWork, patient_id: str, order_id: str) -> tuple[Order, dict]:
    load_patient(uow, patient_id)
    try:
        doc = uow.get(keys.patient(patient_id), order_doc_id(order_id))
    except (errors.NotFound, errors.InvalidRequest):
        raise UnknownOrder(f"No order {order_id} on this patient.") from None
    return order_from_doc(doc), doc


@dataclass(frozen=True)
class ProgressOrder:
    patient_id: str
    order_id: str
    action: str  # ready | start | complete | cancel
    reason: str = ""
    expected_etag: str | None = None


def progress_order(cmd: ProgressOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    now = _now()
    order, doc = _load_order(uow, cmd.patient_id, cmd.order_id)
    uow.expect_etag(doc, cmd.expected_etag)
    event = order.transition(cmd.action, reason=cmd.reason)
    uow.update(_keep_etag(order_to_doc(order), doc))
    data = {"orderId": order.order_id, "status": order.status}
    if order.cancel_reason and cmd.action == "cancel":
        data["cancelReason"] = order.cancel_reason
    append_events(uow, keys.patient(cmd.patient_id), [(event, data)], actor=actor.as_dict(), now=now)
    uow.commit()
    return order


@dataclass(frozen=True)
class AssignOrder:
    patient_id: str
    order_id: str
    assignee_id: str | None
    assignee_name: str | None = None
    expected_etag: str | None = None


def assign_order(cmd: AssignOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    now = _now()
    order, doc = _load_order(uow, cmd.patient_id, cmd.order_id)
    uow.expect_etag(doc, cmd.expected_etag)
    event = order.assign(cmd.assignee_id, cmd.assignee_name)
    uow.update(_keep_etag(order_to_doc(order), doc))
    append_events(uow, keys.patient(cmd.patient_id), [(event, {
        "orderId": order.order_id, "assigneeId": order.assignee_id,
        "assigneeName": order.assignee_name})], actor=actor.as_dict(), now=now)
    uow.commit()
    return order


@dataclass(frozen=True)
class Administer:
    patient_id: str
    order_id: str
    dose: Decimal
    unit: str
    note: str = ""
    expected_etag: str | None = None


def administer(cmd: Administer, uow: UnitOfWork, *, actor: Actor) -> Order:
    now = _now()
    order, doc = _load_order(uow, cmd.patient_id, cmd.order_id)
    uow.expect_etag(doc, cmd.expected_etag)
    reference.get(uow.store, "Unit", cmd.unit, field="unit")
    record = {"administrationId": str(uuid.uuid4()), "at": now.isoformat(),
              "dose": format(cmd.dose.normalize(), "f") if cmd.dose > 0 else "0",
              "unit": cmd.unit, "by": actor.username, "note": " ".join(cmd.note.split())[:300]}
    was = order.status
    order.administer({**record, "dose": cmd.dose})
    order.administrations[-1] = record
    uow.update(_keep_etag(order_to_doc(order), doc))
    events = [("MedicationAdministered", {"orderId": order.order_id, **record})]
    if was != order.status:
        events.append(("OrderStarted", {"orderId": order.order_id, "status": order.status}))
    append_events(uow, keys.patient(cmd.patient_id), events, actor=actor.as_dict(), now=now)
    uow.commit()
    return order


MAX_CANCELLATIONS_PER_BATCH = 45  # 2 operations each, + admission, stream and 1 event ≤ 100


def cancel_active_orders(uow: UnitOfWork, patient_id: str, admission_id: str,
                         reason: str, *, keep: int | None = None
                         ) -> list[tuple[str, dict[str, Any]]]:
    """Register cancellations of the admission's active orders; returns their events.

    ``keep``: leave that many active orders alone (cancel only the surplus beyond it).
    """
    docs = [d for d in uow.query_all(keys.patient(patient_id), Query(where=(
        Cond("docType", "=", "Order"),
        Cond("docContents.status", "in", ["created", "ready", "in_progress"]))))
        if d["docContents"]["admissionId"] == admission_id]
    if keep is not None:
        docs = docs[keep:][:MAX_CANCELLATIONS_PER_BATCH]
    events = []
    for doc in docs:
        order = order_from_doc(doc)
        if order.admission_id != admission_id:
            continue
        order.transition("cancel", reason=reason)
        uow.update(_keep_etag(order_to_doc(order), doc))
        events.append(("OrderCancelled", {"orderId": order.order_id, "status": "cancelled",
                                          "cancelReason": reason}))
    return events
