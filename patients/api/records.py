"""JSON API for the clinical record (``/api/v1/patients``). Thin: parse, check role, call."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Header, Router

from hisadmin.core import access_log, policy, tokens
from hisadmin.core.inputs import PageToken, Text
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response, require_if_match
from hisadmin.core.store import get_store, new_uow
from patients import staff, use_cases
from patients.api.schemas import (
    ERRORS_SCHEMA,
    AdmissionOut,
    AdmitIn,
    DemographicsIn,
    DischargeIn,
    EventPage,
    PatientIn,
    PatientOut,
    admission_out,
    event_out,
    patient_out,
)
from patients.persistence import queries

router = Router(tags=["patients"])
ERRORS = ERRORS_SCHEMA


def _patient(request: HttpRequest, view: queries.View, status: int = 200) -> HttpResponse:
    return json_response(request, patient_out(view), status, etag=view["etag"])


def admission_url(patient_id: str, admission_id: str) -> str:
    return f"/api/v1/patients/{patient_id}/admissions/{admission_id}"


def _admission(request: HttpRequest, view: queries.View, status: int = 200) -> HttpResponse:
    """An admission with its ETag; a created one (201) with its ``Location``."""
    location = admission_url(view["patientId"], view["admissionId"]) if status == 201 else None
    return json_response(request, admission_out(view), status, etag=view["etag"],
                         location=location)


@router.post("/patients", response={201: PatientOut, **ERRORS}, summary="Register a patient")
def register(request: HttpRequest, payload: PatientIn) -> HttpResponse:
    """Creates a patient; send an ``Idempotency-Key`` header so a retry never creates twice.
    (No ``If-Match``: there is no record yet to be based on.)

    A patient with the same family and given name (case and accents aside) and birth date
    already registered: 409 ``/api/v1/problems/possible-duplicate`` with ``candidates``
    (``id``, ``mrn``, ``name``, ``birth_date``), nothing written; send
    ``confirm_not_duplicate: true`` to register anyway."""
    policy.require(request.user, "register")
    uow = new_uow()
    patient = use_cases.register_patient(use_cases.RegisterPatient(
        given_name=payload.given_name, family_name=payload.family_name,
        birth_date=payload.birth_date, sex=payload.sex, mrn=payload.mrn,
        confirm_not_duplicate=payload.confirm_not_duplicate,
    ), uow, actor=actor_for(request.user))
    view = queries.committed(uow, patient.patient_id, "patient")
    return json_response(request, patient_out(view), 201, etag=view["etag"],
                         location=f"/api/v1/patients/{patient.patient_id}")


@router.get("/patients", response={200: list[PatientOut], **ERRORS},
            summary="Find a patient by MRN")
def find(request: HttpRequest, mrn: Text(40)) -> list[dict]:
    policy.require(request.user, "read")
    view = queries.by_mrn(get_store(), mrn)
    if view is not None:  # the whole record: a view of it, as a read by id is
        access_log.note_views(request, [view["patientId"]], "Record (MRN lookup)")
    return [] if view is None else [patient_out(view)]


@router.get("/patients/{patient_id}", response={200: PatientOut, **ERRORS})
def read(request: HttpRequest, patient_id: str) -> HttpResponse:
    policy.require(request.user, "read")
    return _patient(request, queries.patient(get_store(), patient_id))


@router.post("/patients/{patient_id}/admissions", response={201: AdmissionOut, **ERRORS},
             summary="Admit a patient")
def admit(request: HttpRequest, patient_id: str, payload: AdmitIn,
          if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """Send an ``Idempotency-Key`` header so a retried request never admits twice.
    ``If-Match`` (optional): the patient's ETag; stale → 412, nothing written. 201: the
    admission, ``Location`` its URL."""
    policy.require(request.user, "admit")

    attending_id, attending_name = "", payload.attending_name
    if payload.attending:
        attending_id, attending_name = staff.attending(payload.attending)
    uow = new_uow()
    admission = use_cases.admit_patient(use_cases.AdmitPatient(
        patient_id=patient_id, department_id=payload.department_id,
        ward_id=payload.ward_id, bed=payload.bed, reason=payload.reason,
        attending_id=attending_id, attending_name=attending_name, expected_version=if_match,
    ), uow, actor=actor_for(request.user))
    return _admission(request, queries.committed(uow, patient_id, "admission",
                                                 admission.admission_id), 201)


@router.get("/patients/{patient_id}/admissions", response={200: list[AdmissionOut], **ERRORS})
def list_admissions(request: HttpRequest, patient_id: str) -> list[dict]:
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    return [admission_out(v) for v in queries.admissions(store, patient_id)]


@router.get("/patients/{patient_id}/admissions/{admission_id}",
            response={200: AdmissionOut, **ERRORS}, summary="One admission, with its ETag")
def read_admission(request: HttpRequest, patient_id: str, admission_id: str) -> HttpResponse:
    """A stay, active or ended (404: no such patient or admission)."""
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    return _admission(request, queries.admission(store, patient_id, admission_id))


@router.post("/patients/{patient_id}/discharge", response={200: AdmissionOut, **ERRORS},
             summary="Discharge the active admission")
def discharge(request: HttpRequest, patient_id: str, payload: DischargeIn,
              if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``If-Match``: the admission's ETag you based this on (412 if it changed). Ends the
    stay and cancels its active orders in one batch; ``cancel_orders`` names the ones you
    expect (409 ``orders-changed`` if the stay's active orders are others)."""
    policy.require(request.user, "discharge")
    uow = new_uow()
    admission = use_cases.discharge_patient(use_cases.DischargePatient(
        patient_id=patient_id, disposition=payload.disposition, expected_version=if_match,
        note=payload.note, cancel_order_ids=None if payload.cancel_orders is None
        else tuple(payload.cancel_orders),
    ), uow, actor=actor_for(request.user))
    return _admission(request, queries.committed(uow, patient_id, "admission",
                                                 admission.admission_id))


@router.get("/patients/{patient_id}/events", response={200: EventPage, **ERRORS},
            summary="Audit trail, newest first")
def audit(request: HttpRequest, patient_id: str, continuation: PageToken | None = None) -> dict:
    """``continuation``: the previous page's, as given (bound to this patient); any other
    value is a 400 (type /api/v1/problems/bad-page-token)."""
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    scope = tokens.events_scope(patient_id)
    items, token = queries.events(store, patient_id,
                                  continuation=tokens.open_page(continuation, scope=scope))
    return {"items": [event_out(e, patient_id) for e in items],
            "continuation": tokens.sign_page(token, scope=scope)}


@router.put("/patients/{patient_id}", response={200: PatientOut, **ERRORS}, summary="Correct demographics")
def update_demographics(request: HttpRequest, patient_id: str, payload: DemographicsIn,
                        if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``If-Match`` (required): the patient's ETag; without it 428, a stale one 412, and
    nothing changes."""
    policy.require(request.user, "update_demographics")
    version = require_if_match(if_match)
    uow = new_uow()
    use_cases.update_demographics(use_cases.UpdateDemographics(
        patient_id=patient_id, expected_version=version, **payload.dict()), uow,
        actor=actor_for(request.user))
    # Nothing changed: nothing was written, so read what is stored.
    view = (queries.committed(uow, patient_id, "patient")
            or queries.patient(get_store(), patient_id))
    return _patient(request, view)
