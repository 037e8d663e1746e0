"""The one public form of a record's events: what webhooks send, the audit-trail API answers,
the FHIR audit trail and the export map, and what an HL7 feed will map.

The stored event (the outbox's document contents, camelCase as stored) becomes, through
:func:`public_event` and nothing else::

    {"event_id", "type", "schema_version", "patient_id", "seq", "occurred_at",
     "actor": {"id", "username", "display_name"}, "data": {…snake_case…}}

``data`` is the stored event's data with every key snake_case, at any depth; its shape per
event type is the pydantic model in :data:`DATA_MODELS`, derived from the type's domain event
class (:mod:`patients.domain.events`) through the decisions in :data:`PUBLIC`, and its JSON
Schema is published in docs/events.md (``python -m patients.events_doc``). A change to a
type's ``data`` that is not only an added optional field raises its :data:`SCHEMA_VERSIONS`
entry.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from patients.domain import events as ev
from patients.domain.events import EventType
from patients.domain.orders import CORE_FIELDS, KINDS
from patients.domain.orders import Order as DomainOrder

_NO_DEFAULT = object()  # a decision that keeps the domain's default
REQUIRED = object()  # a field the public form always has, whatever the domain's default

# ------------------------------------------------------------------ the public form

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NESTED = (dict, list)


@functools.lru_cache(maxsize=1024)
def snake_key(key: str) -> str:
    """``placedAt`` → ``placed_at``; a key already snake_case (or a code like
    ``allergy-conflict``) is kept."""
    return _CAMEL.sub("_", key).lower()


def snake_keys(value: Any) -> Any:
    """``value`` with every dict key, at any depth, snake_case: a stored document or event
    as the API shows it."""
    if isinstance(value, dict):  # scalars inline (hot on worklist reads; JSON: exact types)
        return {snake_key(k): snake_keys(v) if type(v) in _NESTED else v
                for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) if type(v) in _NESTED else v for v in value]
    return value


# Per event type, the version of its ``data`` shape (1 unless listed).
SCHEMA_VERSIONS: dict[str, int] = {}


def schema_version(event_type: str) -> int:
    return SCHEMA_VERSIONS.get(str(event_type), 1)


def public_actor(actor: Mapping[str, Any] | None) -> dict[str, Any]:
    """Who did it, as recorded then (never the roles they had)."""
    actor = actor or {}
    return {"id": None if actor.get("id") is None else str(actor["id"]),
            "username": str(actor.get("username") or ""),
            "display_name": str(actor.get("display_name") or actor.get("displayName") or "")}


def public_event(stored: Mapping[str, Any], *, patient_id: str | None) -> dict[str, Any]:
    """The public form of one stored event (an outbox document's contents).
    ``patient_id``: the patient whose stream holds it (None for a ward's or a reference
    type's stream)."""
    kind = str(stored["type"])
    return {
        "event_id": stored.get("eventId"),
        "type": kind,
        "schema_version": schema_version(kind),
        "patient_id": patient_id,
        "seq": int(stored["seq"]),
        "occurred_at": stored.get("occurredAt"),
        "actor": public_actor(stored.get("actor")),
        "data": snake_keys(dict(stored.get("data") or {})),
    }


# ------------------------------------------------------------------ the schemas
# An event's ``data`` is its domain event's ``payload()``: the public model of each type is
# derived from the domain class (:mod:`patients.domain.events`), field by field, through the
# decisions in :data:`PUBLIC` (published as it is, under another name, spread into a record's
# shape, or not published because it names the type). A field the domain gains without a
# decision is not published, and the test suite fails until it gets one (:func:`undecided`).


class _Data(BaseModel):
    """An event's data: every field it has is declared (a field the domain gains is
    decided in :data:`PUBLIC` first)."""

    model_config = ConfigDict(extra="forbid")


class _Record(BaseModel):
    """A part of the record as kept on it, carried whole: the fields listed here, and the
    kind-specific ones the record keeps beside them."""

    model_config = ConfigDict(extra="allow")


class ActorOut(_Data):
    id: str | None = Field(description="the user's id (\"system\" for the system)")
    username: str
    display_name: str = Field(description="the full name as recorded then; may be empty")


@dataclass(frozen=True)
class Keep:
    """Published as it is (snake_case of its name), its type and default the domain's
    unless given here; ``name``: published under another name."""

    description: str | None = None
    type: Any = None
    default: Any = _NO_DEFAULT
    name: str | None = None


@dataclass(frozen=True)
class Spread:
    """A mapping whose keys are the data's own (a part of the record carried whole, or the
    changed fields): published in ``model``'s shape."""

    model: type[BaseModel]


@dataclass(frozen=True)
class TypeOnly:
    """Not in the data: it chooses which of the class's types the event is stored as."""


KEEP, TYPE_ONLY = Keep(), TypeOnly()
ALWAYS = Keep(default=REQUIRED)  # as it is, and required whatever the domain's default
Decision = Keep | Spread | TypeOnly


def derive_fields(cls: type, decisions: Mapping[str, Decision], *,
                  order: Sequence[str] = ()) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """The pydantic fields of a dataclass ``cls`` under ``decisions`` (fields without one
    are left out: :func:`undecided` names them; those named in ``order`` first, in that
    order), and the record model a :class:`Spread` of a whole record names (None: none)."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    record: type[BaseModel] | None = None
    for f in dataclasses.fields(cls):
        decision = decisions.get(f.name)
        if decision is None or isinstance(decision, TypeOnly):
            continue
        if isinstance(decision, Spread):
            if issubclass(decision.model, _Record):
                record = decision.model
            for name, info in decision.model.model_fields.items():
                out[name] = (info.annotation, info)
            continue
        default: Any = decision.default
        if default is _NO_DEFAULT:
            default = (f.default if f.default is not dataclasses.MISSING
                       else f.default_factory() if f.default_factory is not dataclasses.MISSING
                       else REQUIRED)
        info = Field(... if default is REQUIRED else default, description=decision.description)
        out[decision.name or f.name] = (decision.type or hints[f.name], info)
    first = [n for n in order if n in out]
    return {n: out[n] for n in [*first, *(n for n in out if n not in first)]}, record


def _model(name: str, cls: type, decisions: Mapping[str, Decision], *, doc: str | None = None,
           base: type[BaseModel] = _Data, order: Sequence[str] = (),
           **added: Any) -> type[BaseModel]:
    fields, record = derive_fields(cls, decisions, order=order)
    if record is not None and not fields.keys() - record.model_fields.keys() and not added:
        return record  # the data is that record, whole
    return create_model(name, __base__=base, __doc__=doc, **fields, **added)


# ------------------------------------------------------------------ parts of the record
# What an event carries whole (an order, an allergy, a handover…): the shape kept on the
# record, the kind-specific fields beside these.


class Override(_Record):
    check: str = Field(description="the check overridden, e.g. dose-interval, allergy-conflict")
    detail: str
    reason: str
    by: str
    at: str


class Allergy(_Record):
    allergy_id: str
    allergen_code: str | None = Field(description="a reference allergen; null: free text")
    substance: str
    checkable: bool
    reaction: str
    severity: str
    criticality: str
    status: str
    recorded_at: str
    recorded_by: str


class DemographicsChanges(_Data):
    given_name: str | None = None
    family_name: str | None = None
    birth_date: str | None = None
    sex: str | None = None


class Move(_Data):
    """A transfer as kept on the admission."""

    at: str
    from_ward: str
    from_bed: str | None
    to_ward: str
    to_bed: str | None
    to_department: str
    by: str


# The order as kept (``patients.domain.orders.Order.as_record``): its fields, and its
# kind's ``details`` beside them.
ORDER_PUBLIC: dict[str, Decision] = {
    "order_id": KEEP, "patient_id": KEEP, "admission_id": KEEP,
    "kind": Keep(type=Literal[tuple(KINDS)]), "urgency": KEEP, "description": KEEP,
    "department_id": KEEP, "ward_id": Keep(type=str | None, default=None),
    "placed_at": KEEP, "placed_by": KEEP, "details": TYPE_ONLY,
    "status": ALWAYS, "assignee_id": KEEP, "assignee_name": KEEP, "cancel_reason": KEEP,
    "administrations": Keep(default=[]), "version": ALWAYS}

# The order's fields in the order the record keeps them (``CORE_FIELDS``).
ORDER_FIELD_ORDER = tuple(snake_key(n) for n in CORE_FIELDS)


def order_fields(overrides: Mapping[str, Decision] | None = None) -> dict[str, Any]:
    """The public order's fields (pydantic field definitions), with ``overrides`` of their
    decisions: what an adapter's model of an order (the API's ``OrderOut``) is built from."""
    return derive_fields(DomainOrder, {**ORDER_PUBLIC, **(overrides or {})},
                         order=ORDER_FIELD_ORDER)[0]


Order = _model("Order", DomainOrder, ORDER_PUBLIC, base=_Record, order=ORDER_FIELD_ORDER, doc=(
    "The whole order as placed; a medication's, an imaging exam's or a lab test's own\n"
    "fields beside these (``medication_code``, ``dose``, ``schedule``…, ``modality``…,\n"
    "``test_code``…)."))


class AdministrationData(_Record):
    """The administration as kept on the order (its ``at``: when it was recorded)."""

    order_id: str
    administration_id: str
    status: Literal["given", "not_given"]
    at: str
    administered_at: str | None = None
    scheduled_for: str | None = None
    slot_id: str | None = None
    dose: str | None = None
    unit: str | None = None
    reason: str | None = None
    reason_detail: str | None = None
    overrides: list[Override] = []
    override: Override | None = None
    by: str
    note: str = ""


class PairPatient(_Data):
    patient_id: str
    mrn: str


class Handover(_Record):
    handover_id: str
    shift: str
    ward_id: str | None = None
    bed: str | None = None
    situation: str = ""
    background: str = ""
    assessment: str = ""
    recommendation: str = ""
    written_at: str
    written_by: str
    written_by_name: str = ""


class News2Data(_Data):
    score: int | None = Field(description="the total, 0–20; null for an incomplete set")
    risk: Literal["low", "low-medium", "medium", "high"] | None
    parameter_scores: dict[str, int] = Field(
        description="each parameter recorded → its score, 0–3")
    complete: bool
    missing: list[str] = Field(description="the scored parameters the set lacks")
    scale: Literal[1, 2] = Field(description="the SpO2 scale the set was scored on")
    next_due_at: str | None = Field(description="when the next set is due; null when "
                                    "incomplete")


class ObservationFlag(_Data):
    field: str
    message: str


class ObservationSource(_Data):
    system: str = Field(description="the sending application^facility (HL7 MSH-3^MSH-4)")
    devices: list[str] = Field(description="the monitors (OBX-18), when named")
    control_id: str = Field(description="the message's control id (MSH-10)")


class ObservationData(_Record):
    observation_id: str
    taken_at: str
    respiration_rate: int | None = None
    spo2: int | None = None
    on_oxygen: bool | None = None
    oxygen_device: str | None = None
    oxygen_flow_litres_per_min: float | None = None
    systolic_bp: int | None = None
    diastolic_bp: int | None = None
    pulse: int | None = None
    consciousness: Literal["A", "C", "V", "P", "U"] | None = None
    temperature: float | None = Field(None, description="°C")
    pain_score: int | None = None
    comment: str = ""
    flags: list[ObservationFlag] = Field(description="values possible but extreme")
    news2: News2Data
    admission_id: str | None = None
    ward_id: str | None = None
    bed: str | None = None
    confirmed_by: str | None = Field(None, description="scan: the wristband was scanned")
    recorded_at: str
    recorded_by: str
    recorded_by_name: str = ""
    source: ObservationSource | None = Field(None, description="a set a bedside monitor "
                                             "sent (HL7 ORU^R01): where it came from")


class MergeCopied(_Data):
    """The retired record's documents a merge step moved, by kind (their ids)."""

    allergies: list[str] = Field(default_factory=list)
    admissions: list[str] = Field(default_factory=list)
    orders: list[str] = Field(default_factory=list)
    observations: list[str] = Field(default_factory=list)
    handovers: list[str] = Field(default_factory=list)


# ------------------------------------------------------------------ the events
# Per domain event class, the public form of each of its fields. Every field of every class
# has one (tests/unit/test_events_public.py); a field added to a domain event is published
# only once it is decided here.
PUBLIC: dict[type[ev.Event], dict[str, Decision]] = {
    ev.PatientRegistered: {"patient_id": KEEP, "mrn": KEEP, "given_name": KEEP,
                           "family_name": KEEP, "birth_date": Keep("YYYY-MM-DD"),
                           "sex": KEEP},
    ev.DemographicsUpdated: {"changes": Spread(DemographicsChanges), "previous": KEEP},
    ev.AllergyAdded: {"allergy": Spread(Allergy)},
    ev.AllergyRemoved: {"allergy_id": KEEP, "substance": KEEP,
                        "reason": Keep("entered-in-error | resolved | other",
                                       default=REQUIRED),
                        "detail": ALWAYS},
    ev.NoKnownAllergiesRecorded: {"recorded_at": KEEP, "recorded_by": KEEP},
    ev.AdmissionStarted: {"admission_id": KEEP, "department_id": KEEP, "ward_id": KEEP,
                          "bed": KEEP, "attending_id": KEEP, "attending_name": KEEP,
                          "reason": KEEP, "started_at": KEEP},
    ev.PatientTransferred: {"admission_id": KEEP, "move": Spread(Move)},
    ev.AdmissionEnded: {"admission_id": KEEP, "disposition": KEEP, "ended_at": KEEP,
                        "ward_id": KEEP, "bed": KEEP, "note": KEEP},
    ev.OrderPlaced: {"kind": TYPE_ONLY, "order": Spread(Order)},
    ev.OrderProgressed: {"progress": TYPE_ONLY, "order_id": KEEP,
                         "status": Keep("the order's new status"),
                         "cancel_reason": Keep("cancelled: why"),
                         "ended_at": Keep("completed or cancelled: when it ended")},
    ev.OrderAssigned: {"order_id": KEEP, "assignee_id": KEEP, "assignee_name": KEEP},
    ev.OrderRepaired: {"order_id": KEEP,
                       "field": Keep("the stored field repaired, as stored (e.g. startAt)"),
                       "previous": KEEP, "value": KEEP},
    ev.MedicationAdministered: {"order_id": KEEP, "record": Spread(AdministrationData)},
    ev.MedicationNotGiven: {"order_id": KEEP, "record": Spread(AdministrationData)},
    ev.ResultsRecorded: {
        "order_id": KEEP, "placed_by": Keep("the ordering clinician's user id"),
        "kind": Keep(type=Literal["lab", "imaging"]), "description": KEEP,
        "flags": Keep("{abnormal, high: [analytes], low: [analytes]}"),
        "results": Keep(
            "{values, report, resulted_at, resulted_by, status (preliminary, final or "
            "corrected: a laboratory's through HL7), observed_at, comments, history (the "
            "results it replaced)}; a value may carry the laboratory's comparator, "
            "lab_range, lab_flags, observed_at and comments")},
    ev.ResultAcknowledged: {"order_id": KEEP, "placed_by": KEEP, "acknowledged_at": KEEP,
                            "acknowledged_by": KEEP},
    ev.ReferenceEntrySaved: {"type_name": Keep(name="reference_type"), "code": KEEP,
                             "entry": KEEP, "previous": ALWAYS},
    ev.BedCleaned: {"ward_id": KEEP, "bed": KEEP, "admission_id": KEEP,
                    "cleaning_since": KEEP},
    ev.NursesAssigned: {"ward_id": KEEP, "shift": Keep("e.g. 2026-11-25-day"),
                        "assignments": Keep("bed → {nurse_id, nurse_name}"),
                        "previous": KEEP},
    ev.HandoverWritten: {"handover": Spread(Handover)},
    ev.HandoverAcknowledged: {"handover_id": KEEP, "shift": KEEP, "acknowledged_at": KEEP,
                              "acknowledged_by": KEEP, "acknowledged_by_name": KEEP},
    ev.ObservationsRecorded: {"observation": Spread(ObservationData)},
    ev.Spo2Scale2Decided: {"decided_at": KEEP, "decided_by": KEEP, "decided_by_name": KEEP,
                           "reason": KEEP},
    ev.Spo2Scale2Ended: {"ended_at": KEEP, "ended_by": KEEP, "ended_by_name": KEEP,
                         "reason": KEEP},
    ev.ObservationsEscalated: {
        "observation_id": KEEP, "told_whom": KEEP, "told_at": KEEP,
        "response": Keep(type=Literal["reviewed", "plan", "critical-care"]),
        "detail": KEEP, "recorded_by": KEEP, "recorded_by_name": KEEP},
    ev.NotSamePerson: {
        "pair_id": Keep("the two patients' ids, ordered, joined by a dot"),
        "patients": Keep("the two patients, by id and MRN", type=list[PairPatient]),
        "reasons": Keep("why they were listed as a possible duplicate, in words"),
        "reason": Keep("why records staff decided they are two people")},
    ev.MergeEvent: {
        "step": TYPE_ONLY, "merge_id": KEEP, "survivor_id": KEEP, "survivor_mrn": KEEP,
        "retired_id": KEEP, "retired_mrn": KEEP,
        "reason": Keep("why the records were merged (or the merge undone)", default=REQUIRED),
        "copied": Keep("the steps that move documents: what this one moved",
                       type=MergeCopied | None),
        "part": Keep("which batch of the documents, from 1"), "parts": KEEP},
}
# What a payload adds that is no field of its class (worked out from the fields).
ADDED: dict[type[ev.Event], dict[str, Any]] = {
    ev.ReferenceEntrySaved: {"changed": (list[str], Field(
        description="the entry's fields that changed (as stored)"))},
}
# A published model's description, where it needs one (a domain docstring speaks of the
# stored, camelCase form); each is named for its class (``PatientRegisteredData``…).
DOCS: dict[type[ev.Event], str] = {
    ev.MergeEvent: "One step of merging the *retired* record into the *survivor* (or of "
                   "undoing it); both records and both MRNs are named in every step, in both "
                   "streams.",
    ev.DemographicsUpdated: "The corrected fields' new values, and ``previous``: their old "
                            "ones.",
}


def domain_events() -> list[type[ev.Event]]:
    """Every concrete event class of the domain."""
    return [c for c in vars(ev).values()
            if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event]


def undecided(classes: Iterable[type[ev.Event]] | None = None) -> list[str]:
    """``Class.field`` of every domain event field with no public form decision (and of
    every decision naming no field): empty when the public form is whole."""
    out = []
    for cls in domain_events() if classes is None else classes:
        decided = PUBLIC.get(cls, {})
        names = {f.name for f in dataclasses.fields(cls)}
        out += [f"{cls.__name__}.{n}" for n in sorted(names - decided.keys())]
        out += [f"{cls.__name__}.{n} (no such field)" for n in sorted(decided.keys() - names)]
    return out


def _data_models() -> dict[str, type[BaseModel]]:
    models: dict[str, type[BaseModel]] = {}
    for cls in domain_events():
        model = _model(f"{cls.__name__}Data", cls, PUBLIC.get(cls, {}), doc=DOCS.get(cls),
                       **ADDED.get(cls, {}))
        for kind in cls.stored_as:
            models[str(kind)] = model
    return models


# Every event type's data, by its name, derived from its domain class.
DATA_MODELS: dict[str, type[BaseModel]] = _data_models()


def event_types() -> list[str]:
    """Every event type, in the vocabulary's order (:class:`EventType`)."""
    return [str(t) for t in EventType]


@functools.cache
def json_schema(event_type: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one event type's public form, ``data`` included;
    KeyError for a type with no data model."""
    data = DATA_MODELS[event_type].model_json_schema(ref_template="#/$defs/{model}")
    defs = data.pop("$defs", {})
    actor = ActorOut.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": event_type,
        "type": "object",
        "additionalProperties": False,
        "required": ["event_id", "type", "schema_version", "patient_id", "seq", "occurred_at",
                     "actor", "data"],
        "properties": {
            "event_id": {"type": "string", "description": "unique; the same on a redelivery"},
            "type": {"const": event_type},
            "schema_version": {"const": schema_version(event_type)},
            "patient_id": {"type": ["string", "null"],
                           "description": "null for a ward's or a reference type's stream"},
            "seq": {"type": "integer", "minimum": 1,
                    "description": "the event's place in its stream, from 1, no gaps"},
            "occurred_at": {"type": "string", "format": "date-time"},
            "actor": actor,
            "data": data,
        },
        **({"$defs": defs} if defs else {}),
    }
