"""Commands as a Django team writes them: one transaction each, the patient row locked
(``select_for_update``) so concurrent commands on one patient serialise, and an audit row
written in the same transaction (the product writes its events in the same batch)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Max

from bench.relational.models import (
    ACTIVE_ORDER,
    Administration,
    Admission,
    AuditEvent,
    Bed,
    ObservationSet,
    Order,
    Patient,
    Ward,
    fold,
)
from patients.domain import observations as news2_rules
from patients.domain.errors import InvalidInput


class DomainError(Exception):
    status = 409


class NotFoundError(DomainError):
    status = 404


def _now() -> datetime:
    return datetime.now(UTC)


def _audit(patient: Patient, type_: str, actor: str, data: dict[str, Any]) -> None:
    last = AuditEvent.objects.filter(patient=patient).aggregate(m=Max("seq"))["m"] or 0
    AuditEvent.objects.create(patient=patient, seq=last + 1, type=type_, occurred_at=_now(),
                              actor=actor, data=data)


def _locked_patient(patient_id: str) -> Patient:
    try:
        return Patient.objects.select_for_update().get(pk=patient_id)
    except (Patient.DoesNotExist, ValueError):
        raise NotFoundError("No such patient.") from None


def _next_mrn_number() -> int:
    """A sequence on PostgreSQL; on SQLite, max + 1 (writers are serialised: IMMEDIATE)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval('relational_mrn_seq')")
            return int(cursor.fetchone()[0])
    last = Patient.objects.filter(mrn__startswith="H").aggregate(m=Max("mrn"))["m"]
    return int(last[1:]) + 1 if last else 1


@transaction.atomic
def register(*, given_name: str, family_name: str, birth_date: Any, sex: str, mrn: str,
             actor: str) -> Patient:
    now = _now()
    if not mrn:
        mrn = f"H{_next_mrn_number():07d}"
    patient = Patient.objects.create(
        mrn=mrn, given_name=given_name, family_name=family_name,
        name_key=fold(f"{family_name} {given_name}"), birth_date=birth_date, sex=sex,
        created_at=now, updated_at=now)
    AuditEvent.objects.create(patient=patient, seq=1, type="PatientRegistered",
                              occurred_at=now, actor=actor, data={"mrn": mrn})
    return patient


@transaction.atomic
def admit(patient_id: str, *, department_id: str, ward_id: str, bed: str, reason: str,
          attending_id: str, attending_name: str, actor: str) -> Admission:
    patient = _locked_patient(patient_id)
    try:
        ward = Ward.objects.get(pk=ward_id, department_id=department_id)
    except Ward.DoesNotExist:
        raise DomainError("Unknown ward for this department.") from None
    bed_row = None
    if bed:
        try:
            bed_row = Bed.objects.get(ward=ward, code=bed)
        except Bed.DoesNotExist:
            raise DomainError("No such bed.") from None
    if Admission.objects.filter(patient=patient, status="active").exists():
        raise DomainError("Already admitted.")
    admission = Admission.objects.create(
        patient=patient, status="active", department_id=department_id, ward=ward, bed=bed_row,
        attending_id=attending_id, attending_name=attending_name, reason=reason,
        started_at=_now())
    _audit(patient, "AdmissionStarted", actor, {"admissionId": str(admission.id)})
    return admission


@transaction.atomic
def record_no_known_allergies(patient_id: str, actor: str) -> Patient:
    patient = _locked_patient(patient_id)
    if patient.allergies.exists():
        raise DomainError("Allergies are recorded: remove them first.")
    patient.no_known_allergies_at, patient.version = _now(), patient.version + 1
    patient.save(update_fields=["no_known_allergies_at", "version"])
    _audit(patient, "NoKnownAllergiesRecorded", actor, {})
    return patient


@transaction.atomic
def place_order(patient_id: str, *, kind: str, urgency: str, fields: dict[str, Any],
                actor: str) -> Order:
    patient = _locked_patient(patient_id)
    admission = Admission.objects.filter(patient=patient, status="active").first()
    if admission is None:
        raise DomainError("Orders need an active admission.")
    if kind == "medication" and patient.no_known_allergies_at is None \
            and not patient.allergies.exists():
        raise DomainError("Allergies not yet asked: record them first.")
    if kind == "medication":
        desc = f"{fields['medication_code']} {fields['dose']} {fields['unit']}"
    elif kind == "imaging":
        desc = f"{fields['modality']} {fields['body_part']}"
    else:
        desc = fields["test_code"]
    order = Order.objects.create(
        patient=patient, admission=admission, kind=kind, status="created", urgency=urgency,
        description=desc, department_id=admission.department_id, ward_id=admission.ward_id,
        placed_at=_now(), placed_by=actor, **fields)
    _audit(patient, "OrderPlaced", actor, {"orderId": str(order.id), "kind": kind})
    return order


TRANSITIONS = {"ready": (("created",), "ready"), "start": (("created", "ready"), "in_progress"),
               "complete": (("in_progress",), "completed"),
               "cancel": (("created", "ready", "in_progress"), "cancelled")}


def _locked_order(patient: Patient, order_id: str) -> Order:
    try:
        return Order.objects.select_for_update().get(pk=order_id, patient=patient)
    except (Order.DoesNotExist, ValueError):
        raise NotFoundError("No such order.") from None


@transaction.atomic
def progress(patient_id: str, order_id: str, action: str, reason: str, actor: str) -> Order:
    patient = _locked_patient(patient_id)
    order = _locked_order(patient, order_id)
    allowed, target = TRANSITIONS[action]
    if order.status not in allowed:
        raise DomainError(f"A {order.status} order cannot be {target}.")
    order.status, order.version = target, order.version + 1
    if action == "cancel":
        order.cancel_reason = reason
    order.save(update_fields=["status", "version", "cancel_reason"])
    _audit(patient, f"Order{action.capitalize()}", actor, {"orderId": order_id})
    return order


@transaction.atomic
def assign(patient_id: str, order_id: str, user: Any, actor: str) -> Order:
    patient = _locked_patient(patient_id)
    order = _locked_order(patient, order_id)
    order.assignee = user
    order.assignee_name = (user.get_full_name() or user.get_username()) if user else ""
    order.version += 1
    order.save(update_fields=["assignee", "assignee_name", "version"])
    _audit(patient, "OrderAssigned", actor, {"orderId": order_id})
    return order


@transaction.atomic
def administer(patient_id: str, order_id: str, dose: Decimal, unit: str, actor: str) -> Order:
    patient = _locked_patient(patient_id)
    order = _locked_order(patient, order_id)
    if order.kind != "medication" or order.status not in ("ready", "in_progress"):
        raise DomainError("Administer only a ready or in-progress prescription.")
    Administration.objects.create(order=order, at=_now(), dose=dose, unit=unit, by=actor)
    order.status, order.version = "in_progress", order.version + 1
    order.save(update_fields=["status", "version"])
    _audit(patient, "MedicationAdministered", actor, {"orderId": order_id})
    return order


@transaction.atomic
def discharge(patient_id: str, disposition: str, actor: str) -> Admission:
    patient = _locked_patient(patient_id)
    admission = Admission.objects.select_for_update().filter(
        patient=patient, status="active").first()
    if admission is None:
        raise DomainError("Not admitted.")
    active = list(Order.objects.filter(ACTIVE_ORDER, admission=admission)
                  .values_list("id", flat=True))
    Order.objects.filter(id__in=active).update(status="cancelled", version=F("version") + 1,
                                               cancel_reason="Patient discharged")
    now = _now()
    admission.status, admission.ended_at, admission.disposition = "ended", now, disposition
    admission.version += 1
    admission.save(update_fields=["status", "ended_at", "disposition", "version"])
    last = AuditEvent.objects.filter(patient=patient).aggregate(m=Max("seq"))["m"] or 0
    AuditEvent.objects.bulk_create(
        [AuditEvent(patient=patient, seq=last + 1 + i, type="OrderCancelled",
                    occurred_at=now, actor=actor, data={"orderId": str(oid)})
         for i, oid in enumerate(active)]
        + [AuditEvent(patient=patient, seq=last + 1 + len(active), type="AdmissionEnded",
                      occurred_at=now, actor=actor, data={"disposition": disposition})])
    return admission


class InvalidValue(DomainError):
    status = 422


@transaction.atomic
def record_observations(patient_id: str, values: dict[str, Any], taken_at: datetime | None,
                        actor: str) -> ObservationSet:
    """A set of vital signs, checked and scored with the product's pure NEWS2 functions;
    the stay's latest score moved on its row when the set is complete and the newest."""
    patient = _locked_patient(patient_id)
    try:
        checked, _ = news2_rules.checked(values)
    except InvalidInput as exc:
        raise InvalidValue(str(exc)) from None
    now = _now()
    taken = taken_at or now
    score = news2_rules.news2(checked, taken_at=taken)
    admission = Admission.objects.select_for_update().filter(
        patient=patient, status="active").first()
    made = ObservationSet.objects.create(
        patient=patient, admission=admission, taken_at=taken,
        values={k: v for k, v in checked.items() if v not in (None, "")},
        score=score.score, risk=str(score.risk or ""), complete=score.complete,
        next_due_at=score.next_due_at, recorded_at=now, recorded_by=actor)
    if admission is not None and score.complete and (
            admission.news2_taken_at is None or taken >= admission.news2_taken_at):
        admission.news2_score, admission.news2_risk = score.score, str(score.risk)
        admission.news2_taken_at, admission.news2_next_due = taken, score.next_due_at
        admission.save(update_fields=["news2_score", "news2_risk", "news2_taken_at",
                                      "news2_next_due"])
    _audit(patient, "ObservationsRecorded", actor, {"observationId": str(made.id)})
    return made
