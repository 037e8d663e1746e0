"""Orders: placing them, moving them through their states, assigning them.

Recording administrations is in :mod:`patients.use_cases.administrations`."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import hospital_time_zone
from patients.domain import checks
from patients.domain.dose_times import FIRST_DOSE_NEXT, FIRST_DOSES, is_prn, schedule_for
from patients.domain.errors import InvalidInput, NotAdmitted, OrderConflicts
from patients.domain.events import (
    REPAIRABLE_ORDER_FIELDS,
    EventType,
    OrderAssigned,
    OrderPlaced,
    OrderProgressed,
    OrderRepaired,
)
from patients.domain.orders import Order, Urgency, course
from patients.domain.results import GivenValue
from patients.persistence import reference
from patients.persistence.repository import PatientRecord, PatientRecords
from patients.use_cases.results import CompleteOrder, complete_order


@dataclass(frozen=True)
class PlaceOrder:
    patient_id: str
    kind: str  # medication | imaging | lab
    urgency: str = Urgency.ROUTINE
    medication_code: str = ""
    dose: Decimal | None = None
    unit: str = ""
    route: str = ""
    frequency: str = ""
    # ISO 8601 text or an aware datetime; without an offset, the hospital's time
    start_at: datetime | str | None = None
    end_at: datetime | str | None = None
    as_needed: bool = False
    # the first dose: "next" standard time, or "now" (a one-off dose time, then the times)
    first_dose: str = FIRST_DOSE_NEXT
    modality: str = ""
    body_part: str = ""
    test_code: str = ""
    note: str = ""
    # check type (allergy-status-unknown, allergy-conflict, dose-limit, duplicate-order) →
    # reason, at least 10 characters and two words
    overrides: dict[str, str] = field(default_factory=dict)
    expected_version: str | None = None  # of the patient: the order is checked against it


def _medication_entries(cmd: PlaceOrder, store: DocumentStore) -> dict[str, Any]:
    """The reference entries the medication checks read (cached; no round trip when warm)."""
    med = reference.get(store, "Medication", cmd.medication_code, field="medication_code")
    dose_unit = med.get("doseUnit")
    return {"medication": med, "unit": reference.get(store, "Unit", cmd.unit, field="unit"),
            "dose_unit": reference.all_of(store, "Unit").get(dose_unit) if dose_unit else None,
            "frequency": reference.get(store, "Frequency", cmd.frequency, field="frequency")}


def _order_details(cmd: PlaceOrder, store: DocumentStore) -> tuple[str, dict[str, Any]]:
    if cmd.kind == "medication":
        med = reference.get(store, "Medication", cmd.medication_code, field="medication_code")
        reference.get(store, "Unit", cmd.unit, field="unit")
        route = reference.get(store, "Route", cmd.route, field="route")
        allowed = med.get("routes") or []
        if allowed and cmd.route not in allowed:
            names = reference.all_of(store, "Route")
            raise InvalidInput(
                f"{med['name']} is not given by the {route.get('name', cmd.route).lower()} "
                "route; choose " + " or ".join((names.get(r) or {}).get("name", r).lower()
                                               for r in allowed) + ".", field="route")
        frequency = reference.get(store, "Frequency", cmd.frequency, field="frequency")
        if cmd.dose is None or cmd.dose <= 0:
            raise InvalidInput("Give a positive dose.", field="dose")
        zone = hospital_time_zone()
        bounds = course(cmd.start_at, cmd.end_at, zone)
        # the dose times count from the start; one not given is the placing moment
        bounds["startAt"] = bounds["startAt"] or datetime.now(UTC).isoformat()
        if cmd.first_dose not in FIRST_DOSES:
            raise InvalidInput("first_dose must be next or now.", field="first_dose")
        as_needed = cmd.as_needed or is_prn(frequency)
        schedule = None if as_needed else schedule_for(
            frequency, zone=getattr(zone, "key", None) or str(zone),
            start=datetime.fromisoformat(bounds["startAt"]), first_dose=cmd.first_dose)
        dose = format(cmd.dose.normalize(), "f")
        prn = " PRN" if as_needed and cmd.frequency != "PRN" else ""
        return (f"{med['name']} {dose} {cmd.unit} {cmd.route} {cmd.frequency}{prn}", {
            "medicationCode": cmd.medication_code, "medicationName": med["name"],
            "dose": dose, "unit": cmd.unit, "route": cmd.route, "frequency": cmd.frequency,
            **bounds,
            "asNeeded": as_needed,
            # the standard local times it was prescribed with (dose_times): slots never move
            "schedule": schedule,
            # the schedule travels with the order, so readers of its events need no lookup
            "frequencyHours": frequency.get("hours") or 0})
    if cmd.kind == "imaging":
        modality = reference.get(store, "Modality", cmd.modality, field="modality")
        part = reference.get(store, "BodyPart", cmd.body_part, field="body_part")
        return (f"{modality['name']} — {part['name']}",
                {"modality": cmd.modality, "modalityName": modality["name"],
                 "bodyPart": cmd.body_part})
    if cmd.kind == "lab":
        test = reference.get(store, "LabTest", cmd.test_code, field="test_code")
        return test["name"], {"testCode": cmd.test_code, "testName": test["name"]}
    raise InvalidInput("Order kind must be medication, imaging or lab.", field="kind")


def _allergen_names(store: DocumentStore, allergies: list[dict[str, Any]]) -> dict[str, str]:
    """Allergen names (checks compare codes; the names are for free text and the words)."""
    if not allergies:
        return {}
    return {code: e.get("name", code) for code, e in reference.all_of(store, "Allergen").items()}


def check_order(cmd: PlaceOrder, details: dict[str, Any], record: PatientRecord,
                admission_id: str, store: DocumentStore) -> list[checks.Conflict]:
    """Every order check the command fails (allergy status, allergy, dose, duplicate);
    :class:`~patients.domain.checks.DoseHardLimit` (422, no override) first when the dose or
    its daily total passes the medication's hard limit."""
    entries: dict[str, Any] = {}
    allergies = [a for a in record.patient.allergies if a.get("status", "active") == "active"]
    if cmd.kind == "medication":
        entries = {**_medication_entries(cmd, store), "dose": cmd.dose,
                   "allergen_names": _allergen_names(store, allergies),
                   "allergy_status": str(record.patient.allergy_status)}
        if cmd.dose is not None:
            why = checks.prescribing_hard_limit(entries["medication"], cmd.dose,
                                                entries["unit"], entries["dose_unit"],
                                                entries["frequency"])
            if why:
                raise checks.DoseHardLimit(why)
    return checks.check_order(cmd.kind, details, allergies=allergies,
                              active_orders=record.active_orders(admission_id),
                              tz=hospital_time_zone(), **entries)


def overridden(conflicts: list[checks.Conflict], overrides: dict[str, str], *, actor: Actor,
               now: datetime, refused: str = "The order was not placed.",
               change: str = "change the order") -> list[dict[str, str]]:
    """Refuse (``OrderConflicts``, 409) unless every failed check has its own reason that
    counts (:func:`~patients.domain.checks.reason_problem`: a refused one says why); else
    the overrides to keep (which check, what it said, why, who, when)."""
    missing = checks.unresolved(conflicts, overrides)
    if missing:
        raise OrderConflicts(checks.answered(conflicts, overrides), first=missing[0].type,
                             refused=refused, change=change)
    return [{"check": c.type, "detail": c.detail, "reason": overrides[c.type],
             "by": actor.username, "at": now.isoformat()} for c in conflicts]


def place_order(cmd: PlaceOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    now = datetime.now(UTC)
    overrides = checks.clean_overrides(cmd.overrides)
    description, details = _order_details(cmd, uow.store)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    # The checks read the patient's allergies: the clinician ordered against that version.
    records.expect(record, record.patient, cmd.expected_version)
    admission = record.admission
    if admission is None:
        raise NotAdmitted("Orders need an active admission; admit the patient first.")
    conflicts = check_order(cmd, details, record, admission.admission_id, uow.store)
    if conflicts:
        details["overrides"] = overridden(conflicts, overrides, actor=actor, now=now)
    if cmd.note:
        details["note"] = " ".join(cmd.note.split())[:500]
    order = Order.place(kind=cmd.kind, urgency=cmd.urgency, order_id=str(uuid.uuid4()),
                        patient_id=cmd.patient_id, admission_id=admission.admission_id,
                        description=description, department_id=admission.department_id,
                        ward_id=admission.ward_id, placed_at=now.isoformat(),
                        placed_by=actor.id, details=details)
    record.orders[order.order_id] = order
    records.save(record, [OrderPlaced(kind=order.kind, order=order.as_record())], actor=actor,
                 now=now)
    return order


def _order_of(cmd: ProgressOrder | AssignOrder | RepairOrder, uow: UnitOfWork
              ) -> tuple[PatientRecords, PatientRecord, Order]:
    """Load the record with the order ``cmd`` names, at the version it expects."""
    records = PatientRecords(uow)
    record, order = records.load_order(cmd.patient_id, cmd.order_id, cmd.expected_version)
    return records, record, order


@dataclass(frozen=True)
class ProgressOrder:
    patient_id: str
    order_id: str
    action: str  # ready | start | complete | cancel
    reason: str = ""
    expected_version: str | None = None  # of the order
    # complete: a lab order's values (one per analyte), an imaging order's report
    results: tuple[GivenValue, ...] = ()
    report: str = ""


def progress_order(cmd: ProgressOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    if cmd.action == "complete":  # with its results (patients/use_cases/results.py)
        return complete_order(CompleteOrder(cmd.patient_id, cmd.order_id, tuple(cmd.results),
                                            cmd.report, cmd.expected_version), uow, actor=actor)
    now = datetime.now(UTC)
    records, record, order = _order_of(cmd, uow)
    progress = order.transition(cmd.action, reason=cmd.reason)
    records.save(record, [OrderProgressed(
        progress=progress, order_id=order.order_id, status=order.status,
        cancel_reason=order.cancel_reason if progress == EventType.ORDER_CANCELLED else None,
        ended_at=order.ended_at)],
        actor=actor, now=now)
    return order


@dataclass(frozen=True)
class AssignOrder:
    patient_id: str
    order_id: str
    assignee_id: str | None
    assignee_name: str | None = None
    expected_version: str | None = None  # of the order


def assign_order(cmd: AssignOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    now = datetime.now(UTC)
    records, record, order = _order_of(cmd, uow)
    order.assign(cmd.assignee_id, cmd.assignee_name)
    records.save(record, [OrderAssigned(order_id=order.order_id, assignee_id=order.assignee_id,
                                        assignee_name=order.assignee_name)],
                 actor=actor, now=now)
    return order


# An instant as a repair takes it: a date, a time and an offset, nothing left to guess.
STRICT_INSTANT = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})")


@dataclass(frozen=True)
class RepairOrder:
    """Set one stored field of an order that could not be read: ``field`` is the command's
    name (``start_at`` or ``end_at``), ``value`` ISO 8601 with its offset."""

    patient_id: str
    order_id: str
    field: str
    value: str
    expected_version: str | None = None  # of the order


def strict_instant(value: str, name: str) -> str:
    """``value`` if it is an ISO 8601 date and time with an offset (``Z`` or ``±HH:MM``);
    else InvalidInput naming ``name``."""
    text = (value or "").strip()
    try:
        if not STRICT_INSTANT.fullmatch(text):
            raise ValueError(text)
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{name} must be an ISO 8601 date and time with an offset, such "
                           "as 2026-11-25T08:00:00+00:00.", field=name) from None
    return text


def repair_order(cmd: RepairOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    """Correct an order's stored start or end (the record's, and with its event the views'):
    an ``OrderRepaired`` event with the field, the previous and the new value. The new
    course must still end after it starts."""
    fields = {name: stored for stored, name in REPAIRABLE_ORDER_FIELDS.items()}
    if cmd.field not in fields:
        raise InvalidInput(f"field must be one of {', '.join(fields)}.", field="field")
    value = strict_instant(cmd.value, cmd.field)
    now = datetime.now(UTC)
    records, record, order = _order_of(cmd, uow)
    if order.kind != "medication":
        raise InvalidInput("Only medication orders have a start and an end.", field="field")
    stored = fields[cmd.field]
    previous = order.details.get(stored)
    course = {**order.details, stored: value}
    start, end = course.get("startAt"), course.get("endAt")
    try:
        ends_before = bool(start and end) and (
            datetime.fromisoformat(str(end)) <= datetime.fromisoformat(str(start)))
    except (TypeError, ValueError):
        ends_before = False  # the other field cannot be read either: repaired next
    if ends_before:
        raise InvalidInput("The end must be after the start.", field=cmd.field)
    order.details[stored] = value
    order.version += 1
    records.save(record, [OrderRepaired(order_id=order.order_id, field=stored,
                                        previous=previous, value=value)],
                 actor=actor, now=now)
    return order
