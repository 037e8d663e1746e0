"""JSON API for observations and their early-warning score
(``/api/v1/patients/{id}/observations``, ``…/spo2-scale``, ``…/escalations``)."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Field, Router, Schema

from hisadmin.core import policy, tokens
from hisadmin.core.inputs import Instant, MultilineText, PageToken, Text
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response
from hisadmin.core.store import get_store, new_uow
from patients.api.schemas import ERRORS_SCHEMA, StrictIn
from patients.domain import observations as rules
from patients.domain.observation_summary import ESCALATION_RESPONSES
from patients.persistence import observations as stored
from patients.persistence import queries
from patients.use_cases import observations as use_cases

router = Router(tags=["observations"])
Consciousness = Literal[tuple(rules.CONSCIOUSNESS)]  # type: ignore[valid-type]
Device = Literal[tuple(rules.OXYGEN_DEVICES)]  # type: ignore[valid-type]
Response = Literal[tuple(ESCALATION_RESPONSES)]  # type: ignore[valid-type]
RiskCode = Literal[tuple(r.value for r in rules.Risk)]  # type: ignore[valid-type]
MAX_PAGE = 100
# A measurement with a fraction: a JSON number, or text as typed ("38,4" with a decimal
# comma too); the domain reads and range-checks it, naming the field.
Decimal1 = float | Text(12)


class ObservationIn(StrictIn):
    """All optional, at least one value: a partial set is recorded, unscored."""

    respiration_rate: int | None = Field(None, description="breaths/min")
    spo2: int | None = Field(None, description="%")
    on_oxygen: bool | None = Field(None, description="false: air; null: not recorded")
    oxygen_device: Device | None = None
    oxygen_flow_l_min: Decimal1 | None = Field(None, description="L/min")
    systolic_bp: int | None = Field(None, description="mmHg")
    diastolic_bp: int | None = Field(None, description="mmHg")
    pulse: int | None = Field(None, description="beats/min")
    consciousness: Consciousness | None = Field(None, description="ACVPU")
    temperature: Decimal1 | None = Field(None, description="°C")
    pain_score: int | None = Field(None, description="0-10")
    comment: MultilineText(rules.MAX_COMMENT) = ""
    taken_at: Instant | None = Field(None, description="default now; not in the future; "
                                     "without an offset, the hospital's time")
    scanned_id: Text(40) = Field("", description="what the wristband scanner read")


class News2Out(Schema):
    score: int | None = Field(description="0-20; null for an incomplete set")
    risk: RiskCode | None
    parameter_scores: dict[str, int]
    complete: bool
    missing: list[str]
    scale: int = Field(description="the SpO2 scale scored on, 1 or 2")
    next_due_at: str | None


class FlagOut(Schema):
    field: str
    message: str


class EscalationOut(Schema):
    told_whom: str
    told_at: str
    response: Response
    detail: str
    recorded_by: str = Field(description="full name")


class ObservationOut(Schema):
    observation_id: str
    taken_at: str
    respiration_rate: int | None
    spo2: int | None
    on_oxygen: bool | None
    oxygen_device: str | None
    oxygen_flow_l_min: float | None
    systolic_bp: int | None
    diastolic_bp: int | None
    pulse: int | None
    consciousness: str | None
    temperature: float | None
    pain_score: int | None
    comment: str
    flags: list[FlagOut] = Field(description="values possible but extreme: check them")
    news2: News2Out
    ward: str | None
    bed: str | None
    recorded_at: str
    recorded_by: str = Field(description="full name")
    escalations: list[EscalationOut]


class ObservationPage(Schema):
    items: list[ObservationOut]
    continuation: str | None


class ScaleIn(StrictIn):
    scale: Literal[1, 2] = Field(description="2: target SpO2 88-92 %; 1: ends it")
    reason: MultilineText(300, min_length=1)


class ScaleOut(Schema):
    scale: int
    decided_at: str | None
    decided_by: str | None
    reason: str | None


class EscalationIn(StrictIn):
    told_whom: Text(120, min_length=1) = Field(description="name and role of who was told")
    response: Response
    detail: MultilineText(1000) = ""
    told_at: Instant | None = None


def observation_out(o: dict[str, Any]) -> dict[str, Any]:
    news2 = o.get("news2") or {}
    return {"observation_id": o["observationId"], "taken_at": o["takenAt"],
            **{name: o.get(rules.STORED[name]) for name in rules.FIELDS},
            "comment": o.get("comment") or "", "flags": o.get("flags") or [],
            "news2": {"score": news2.get("score"), "risk": news2.get("risk"),
                      "parameter_scores": news2.get("parameterScores") or {},
                      "complete": bool(news2.get("complete")),
                      "missing": news2.get("missing") or [], "scale": news2.get("scale", 1),
                      "next_due_at": news2.get("nextDueAt")},
            "ward": o.get("wardId"), "bed": o.get("bed"), "recorded_at": o["recordedAt"],
            "recorded_by": o.get("recordedByName") or "",
            "escalations": [{"told_whom": e["toldWhom"], "told_at": e["toldAt"],
                             "response": e["response"], "detail": e.get("detail") or "",
                             "recorded_by": e.get("recordedByName") or ""}
                            for e in o.get("escalations") or ()]}


def _url(patient_id: str, observation_id: str) -> str:
    return f"/api/v1/patients/{patient_id}/observations/{observation_id}"


@router.post("/patients/{patient_id}/observations",
             response={201: ObservationOut, **ERRORS_SCHEMA},
             summary="Record an observation set, scored (NEWS2)")
def post_observations(request: HttpRequest, patient_id: str,
                      payload: ObservationIn) -> HttpResponse:
    """201 with the set, its ``news2`` and ``Location``; 422 naming the field for an
    impossible value (SpO2 above 100, a temperature of 3 °C, systolic not above diastolic),
    an empty set or a future ``taken_at``; 409 ``wrong-patient`` for another patient's
    wristband. Send an ``Idempotency-Key`` so a retry never records the set twice."""
    policy.require(request.user, "record_observations")
    data = payload.dict()
    taken_at, scanned = data.pop("taken_at"), data.pop("scanned_id")
    observation, uow = use_cases.record_observations_again_on_a_race(
        use_cases.RecordObservations(patient_id, data, taken_at, scanned), new_uow,
        actor=actor_for(request.user))
    oid = observation["observationId"]
    return json_response(request, observation_out(observation), 201,
                         etag=stored.committed_etag(uow, oid), location=_url(patient_id, oid))


@router.get("/patients/{patient_id}/observations",
            response={200: ObservationPage, **ERRORS_SCHEMA},
            summary="A patient's observation sets, the latest taken first")
def list_observations(request: HttpRequest, patient_id: str, limit: int = 20,
                      continuation: PageToken | None = None) -> dict[str, Any]:
    """``limit``: 1-100 a page; ``continuation``: the previous page's, as given."""
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    scope = f"observations:{patient_id}"
    items, token = stored.page(store, patient_id, limit=max(1, min(limit, MAX_PAGE)),
                               continuation=tokens.open_page(continuation, scope=scope))
    return {"items": [observation_out(o) for o in items],
            "continuation": tokens.sign_page(token, scope=scope)}


@router.get("/patients/{patient_id}/observations/{observation_id}",
            response={200: ObservationOut, **ERRORS_SCHEMA}, summary="One observation set")
def get_observation(request: HttpRequest, patient_id: str,
                    observation_id: str) -> HttpResponse:
    policy.require(request.user, "read")
    observation = stored.one(get_store(), patient_id, observation_id)
    if observation is None:
        raise use_cases.UnknownObservation(f"This patient has no observation set "
                                           f"{observation_id}.")
    return json_response(request, observation_out(observation), etag=observation["etag"])


@router.post("/patients/{patient_id}/observations/{observation_id}/escalations",
             response={201: ObservationOut, **ERRORS_SCHEMA},
             summary="Record who was told of a set's score, when, and the response")
def post_escalation(request: HttpRequest, patient_id: str, observation_id: str,
                    payload: EscalationIn) -> HttpResponse:
    """``response``: reviewed | plan | critical-care. 404: no such set."""
    policy.require(request.user, "escalate_observations")
    uow = new_uow()
    observation = use_cases.escalate(use_cases.EscalateObservations(
        patient_id, observation_id, payload.told_whom, payload.response, payload.detail,
        payload.told_at), uow, actor=actor_for(request.user))
    return json_response(request, observation_out(observation), 201,
                         etag=stored.committed_etag(uow, observation_id),
                         location=_url(patient_id, observation_id))


@router.post("/patients/{patient_id}/spo2-scale", response={200: ScaleOut, **ERRORS_SCHEMA},
             summary="Decide SpO2 scale 2 (target 88-92 %) or end it (a clinician)")
def post_scale(request: HttpRequest, patient_id: str, payload: ScaleIn) -> HttpResponse:
    """409 ``scale-unchanged`` when that scale is already in force; 422 without a reason."""
    policy.require(request.user, "decide_spo2_scale")
    summary = use_cases.decide_scale(use_cases.DecideScale(
        patient_id, payload.scale == 2, payload.reason), new_uow(),
        actor=actor_for(request.user))
    return json_response(request, scale_out(summary))


def scale_out(summary: dict[str, Any] | None) -> dict[str, Any]:
    decision = (summary or {}).get("scale2") or {}
    return {"scale": 2 if decision else 1, "decided_at": decision.get("decidedAt"),
            "decided_by": decision.get("decidedByName"), "reason": decision.get("reason")}
