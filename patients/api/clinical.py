"""JSON API for demographics, allergies, transfers and orders (``/api/v1/patients/...``)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from ninja import Header, Router

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import policy
from hisadmin.core.inputs import MultilineText
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response, require_if_match
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.api.schemas import (
    ERRORS_SCHEMA,
    Action,
    ActionIn,
    AdministrationIn,
    AdmissionOut,
    AllergyIn,
    AssignIn,
    OrderConflictsProblem,
    OrderIn,
    OrderOut,
    PatientOut,
    RemovalReason,
    TransferIn,
    admission_out,
    order_out,
    patient_out,
)
from patients.domain.errors import InvalidInput
from patients.domain.results import GivenValue
from patients.persistence import queries

router = Router(tags=["clinical record"])


def _patient(request: HttpRequest, uow: UnitOfWork, patient_id: str) -> HttpResponse:
    view = queries.committed(uow, patient_id, "patient")
    return json_response(request, patient_out(view), etag=view["etag"])


def order_url(patient_id: str, order_id: str) -> str:
    return f"/api/v1/patients/{patient_id}/orders/{order_id}"


def _order(request: HttpRequest, view: queries.View, status: int = 200) -> HttpResponse:
    """An order with its ETag; after a creation (201) with the order's URL in ``Location``
    (an administration is read as part of its order)."""
    location = order_url(view["patientId"], view["orderId"]) if status == 201 else None
    return json_response(request, order_out(view), status, etag=view["etag"],
                         location=location)


def _saved_order(request: HttpRequest, uow: UnitOfWork, patient_id: str, order_id: str,
                 status: int = 200) -> HttpResponse:
    return _order(request, queries.committed(uow, patient_id, "order", order_id), status)


@router.post("/patients/{patient_id}/allergies", response={200: PatientOut, **ERRORS_SCHEMA},
             summary="Record an allergy (If-Match: the patient's ETag)")
def add_allergy(request: HttpRequest, patient_id: str, payload: AllergyIn,
                if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    policy.require(request.user, "add_allergy")
    uow = new_uow()
    use_cases.add_allergy(use_cases.AddAllergy(patient_id=patient_id, expected_version=if_match,
                                               **payload.dict()), uow,
                          actor=actor_for(request.user))
    return _patient(request, uow, patient_id)


# Before the DELETE below: its {allergy_id} segment would otherwise catch "none".
@router.post("/patients/{patient_id}/allergies/none",
             response={200: PatientOut, **ERRORS_SCHEMA},
             summary="Record that the patient has no known allergies")
def record_no_known_allergies(request: HttpRequest, patient_id: str,
                              if_match: str | None = Header(None, alias="If-Match")
                              ) -> HttpResponse:
    """409 while active allergies are recorded (remove them first); adding an allergy
    later ends it. ``If-Match``: the patient's ETag (optional)."""
    policy.require(request.user, "add_allergy")
    uow = new_uow()
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(
        patient_id=patient_id, expected_version=if_match), uow, actor=actor_for(request.user))
    return _patient(request, uow, patient_id)


@router.delete("/patients/{patient_id}/allergies/{allergy_id}",
               response={200: PatientOut, **ERRORS_SCHEMA},
               summary="Remove an allergy, with a reason (it stays in the record's history)")
def remove_allergy(request: HttpRequest, patient_id: str, allergy_id: str,
                   reason: RemovalReason | None = None, detail: MultilineText(300) = "",
                   if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """Query parameters: ``reason`` (required): entered-in-error, resolved or other;
    ``detail``: why, required when the reason is other. A missing reason is a 422."""
    policy.require(request.user, "remove_allergy")
    uow = new_uow()
    use_cases.remove_allergy(use_cases.RemoveAllergy(
        patient_id, allergy_id, if_match, reason=reason or "", detail=detail), uow,
        actor=actor_for(request.user))
    return _patient(request, uow, patient_id)


@router.post("/patients/{patient_id}/transfer",
             response={200: AdmissionOut, **ERRORS_SCHEMA},
             summary="Move an admitted patient to another ward or bed")
def transfer(request: HttpRequest, patient_id: str, payload: TransferIn,
             if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``If-Match``: the active admission's ETag."""
    policy.require(request.user, "transfer")
    uow = new_uow()
    admission = use_cases.transfer_patient(use_cases.TransferPatient(
        patient_id, payload.ward_id, payload.bed, if_match), uow, actor=actor_for(request.user))
    view = queries.committed(uow, patient_id, "admission", admission.admission_id)
    return json_response(request, admission_out(view), etag=view["etag"])


@router.post("/patients/{patient_id}/orders",
             response={201: OrderOut, **ERRORS_SCHEMA, 409: OrderConflictsProblem},
             summary="Place an order (prescription, imaging exam, lab test)")
def place_order(request: HttpRequest, patient_id: str, payload: OrderIn,
                if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """Send an ``Idempotency-Key`` so a retried request never orders twice.

    The order is checked first (allergy, dose, duplicate). Failed checks answer 409 with
    ``conflicts``; resend with ``overrides`` giving a reason for each of them to place it.
    ``If-Match`` (optional): the patient's ETag (its allergies are what the order is checked
    against); stale → 412. 201: ``Location`` is the order's URL.
    """
    policy.require(request.user, "place_order")
    uow = new_uow()
    order = use_cases.place_order(use_cases.PlaceOrder(patient_id=patient_id,
                                                       expected_version=if_match,
                                                       **payload.dict()), uow,
                                  actor=actor_for(request.user))
    return _saved_order(request, uow, patient_id, order.order_id, 201)


@router.get("/patients/{patient_id}/orders",
            response={200: list[OrderOut], **ERRORS_SCHEMA}, summary="Orders, newest first")
def list_orders(request: HttpRequest, patient_id: str, active: bool = False) -> list[dict]:
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    return [order_out(v) for v in queries.orders(store, patient_id, active_only=active)]


@router.get("/patients/{patient_id}/orders/{order_id}", response={200: OrderOut, **ERRORS_SCHEMA},
            summary="One order, with its ETag")
def read_order(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    return _order(request, queries.order(store, patient_id, order_id))


@router.post("/patients/{patient_id}/orders/{order_id}/administrations",
             response={201: OrderOut, **ERRORS_SCHEMA, 409: OrderConflictsProblem},
             summary="Record a medication administration: a dose given or not given")
def administer(request: HttpRequest, patient_id: str, order_id: str,
               payload: AdministrationIn,
               if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``status`` given (default): ``dose`` and ``unit`` convertible to the ordered unit, at
    most the ordered dose, ``administered_at`` (default now) not in the future; not_given:
    ``reason`` (refused | held | unavailable | patient-absent | other with ``reason_detail``).
    ``slot_id`` (or ``scheduled_for``, to the minute) names the dose time answered; without
    either, the one due then (none or several: 422 slot-required on ``slot_id`` with
    ``candidates``; a slot already recorded: 409). 201: the order; 404: no such patient or
    order; 409: ``prn-interval`` (with ``conflicts``; resend with ``overrides``), an order
    that cannot be administered, or ``wrong-patient``: ``scanned_id`` is not this patient's
    wristband (with ``conflicts``; nothing recorded); 412: stale ``If-Match`` (the order's
    ETag); 422: a rule above. Send an ``Idempotency-Key`` so a retry never records the same
    dose twice.
    ``Location``: the order's URL (its ``administrations`` list the one recorded)."""
    policy.require(request.user, "administer")
    uow = new_uow()
    use_cases.administer(use_cases.Administer(
        patient_id, order_id, payload.dose, payload.unit, payload.note, if_match,
        status=payload.status, administered_at=payload.administered_at,
        reason=payload.reason or "", reason_detail=payload.reason_detail,
        scheduled_for=payload.scheduled_for, slot_id=payload.slot_id,
        overrides=payload.overrides, scanned_id=payload.scanned_id), uow,
        actor=actor_for(request.user))
    return _saved_order(request, uow, patient_id, order_id, 201)


@router.put("/patients/{patient_id}/orders/{order_id}/assignee",
            response={200: OrderOut, **ERRORS_SCHEMA},
            summary="Assign an order to a user (null unassigns)")
def assign(request: HttpRequest, patient_id: str, order_id: str, payload: AssignIn,
           if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``If-Match`` (required): the order's ETag; without it 428, a stale one 412."""
    policy.require(request.user, "assign_order")
    version = require_if_match(if_match)
    assignee_id = assignee_name = None
    if payload.assignee:
        user = get_user_model().objects.filter(username=payload.assignee, is_active=True).first()
        if user is None:
            raise InvalidInput(f"No active user {payload.assignee!r}.", field="assignee")
        assignee_id, assignee_name = str(user.pk), user.get_full_name() or user.get_username()
    uow = new_uow()
    use_cases.assign_order(use_cases.AssignOrder(patient_id, order_id, assignee_id,
                                                 assignee_name, version), uow,
                           actor=actor_for(request.user))
    return _saved_order(request, uow, patient_id, order_id)


# Last: its {action} segment would otherwise catch the fixed paths above.
@router.post("/patients/{patient_id}/orders/{order_id}/{action}",
             response={200: OrderOut, **ERRORS_SCHEMA},
             summary="Progress an order: ready, start, complete or cancel (with a reason)")
def progress(request: HttpRequest, patient_id: str, order_id: str,
             action: Action, payload: ActionIn,
             if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``complete`` a lab order with ``results`` (a value for each analyte of its test) and
    an imaging order with ``report``; without them → 422. Optional ``If-Match``: the
    order's ETag."""
    policy.require(request.user, "cancel_order" if action == "cancel" else "progress_order")
    uow = new_uow()
    given = tuple(GivenValue(r.analyte_code, r.value, r.unit) for r in payload.results)
    use_cases.progress_order(use_cases.ProgressOrder(patient_id, order_id, action,
                                                     payload.reason, if_match, given,
                                                     payload.report), uow,
                             actor=actor_for(request.user))
    return _saved_order(request, uow, patient_id, order_id)
