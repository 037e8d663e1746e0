"""The one public form of a record's events: what webhooks send, the audit-trail API answers,
the FHIR audit trail and the export map, and what an HL7 feed will map.

The stored event (the outbox's document contents, camelCase as stored) becomes, through
:func:`public_event` and nothing else::

    {"event_id", "type", "schema_version", "patient_id", "seq", "occurred_at",
     "actor": {"id", "username", "display_name"}, "data": {…snake_case…}}

``data`` is the stored event's data with every key snake_case, at any depth; its shape per
event type is the pydantic model in :data:`DATA_MODELS`, whose JSON Schema is published in
docs/events.md (``python -m patients.events_doc``). A change to a type's ``data`` that is
not only an added optional field raises its :data:`SCHEMA_VERSIONS` entry.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from patients.domain.events import EventType

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


class _Data(BaseModel):
    """An event's data: every field it has is declared (a new one is added here first)."""

    model_config = ConfigDict(extra="forbid")


class _Record(BaseModel):
    """A part of the record as kept on it, carried whole: the fields listed here, and the
    kind-specific ones the record keeps beside them."""

    model_config = ConfigDict(extra="allow")


class ActorOut(_Data):
    id: str | None = Field(description="the user's id (\"system\" for the system)")
    username: str
    display_name: str = Field(description="the full name as recorded then; may be empty")


class Override(_Record):
    check: str = Field(description="the check overridden, e.g. dose-interval, allergy-conflict")
    detail: str
    reason: str
    by: str
    at: str


class PatientRegisteredData(_Data):
    patient_id: str
    mrn: str
    given_name: str
    family_name: str
    birth_date: str = Field(description="YYYY-MM-DD")
    sex: str


class DemographicsUpdatedData(_Data):
    """The corrected fields' new values, and ``previous``: their old ones."""

    given_name: str | None = None
    family_name: str | None = None
    birth_date: str | None = None
    sex: str | None = None
    previous: dict[str, Any]


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


class AllergyRemovedData(_Data):
    allergy_id: str
    substance: str
    reason: str = Field(description="entered-in-error | resolved | other")
    detail: str


class NoKnownAllergiesRecordedData(_Data):
    recorded_at: str
    recorded_by: str


class AdmissionStartedData(_Data):
    admission_id: str
    department_id: str
    ward_id: str
    bed: str | None
    attending_id: str
    attending_name: str
    reason: str
    started_at: str


class PatientTransferredData(_Data):
    admission_id: str
    at: str
    from_ward: str
    from_bed: str | None
    to_ward: str
    to_bed: str | None
    to_department: str
    by: str


class AdmissionEndedData(_Data):
    admission_id: str
    disposition: str | None
    ended_at: str | None
    ward_id: str
    bed: str | None
    note: str = ""


class Order(_Record):
    """The whole order as placed; a medication's, an imaging exam's or a lab test's own
    fields beside these (``medication_code``, ``dose``, ``schedule``…, ``modality``…,
    ``test_code``…)."""

    order_id: str
    patient_id: str
    admission_id: str
    kind: Literal["medication", "imaging", "lab"]
    status: str
    urgency: str
    description: str
    department_id: str
    ward_id: str | None = None
    assignee_id: str | None = None
    assignee_name: str | None = None
    placed_at: str
    placed_by: str
    cancel_reason: str | None = None
    administrations: list[dict[str, Any]] = []
    version: int


class OrderProgressedData(_Data):
    order_id: str
    status: str = Field(description="the order's new status")
    cancel_reason: str | None = Field(None, description="cancelled: why")
    ended_at: str | None = Field(None, description="completed or cancelled: when it ended")


class OrderAssignedData(_Data):
    order_id: str
    assignee_id: str | None
    assignee_name: str | None


class OrderRepairedData(_Data):
    order_id: str
    field: str = Field(description="the stored field repaired, as stored (e.g. startAt)")
    previous: Any
    value: Any


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


class ResultsRecordedData(_Data):
    order_id: str
    placed_by: str = Field(description="the ordering clinician's user id")
    kind: Literal["lab", "imaging"]
    description: str
    flags: dict[str, Any] = Field(description="{abnormal, high: [analytes], low: [analytes]}")
    results: dict[str, Any] = Field(description=(
        "{values, report, resulted_at, resulted_by, status (preliminary, final or corrected: "
        "a laboratory's through HL7), observed_at, comments, history (the results it "
        "replaced)}; a value may carry the laboratory's comparator, lab_range, lab_flags, "
        "observed_at and comments"))


class ResultAcknowledgedData(_Data):
    order_id: str
    placed_by: str
    acknowledged_at: str
    acknowledged_by: str


class ReferenceEntrySavedData(_Data):
    reference_type: str
    code: str
    entry: dict[str, Any]
    previous: dict[str, Any] | None
    changed: list[str] = Field(description="the entry's fields that changed (as stored)")


class BedCleanedData(_Data):
    ward_id: str
    bed: str
    admission_id: str | None
    cleaning_since: str | None


class NursesAssignedData(_Data):
    ward_id: str
    shift: str = Field(description="e.g. 2026-11-25-day")
    assignments: dict[str, Any] = Field(description="bed → {nurse_id, nurse_name}")
    previous: dict[str, Any]


class PairPatient(_Data):
    patient_id: str
    mrn: str


class NotSamePersonData(_Data):
    pair_id: str = Field(description="the two patients' ids, ordered, joined by a dot")
    patients: list[PairPatient] = Field(description="the two patients, by id and MRN")
    reasons: list[str] = Field(description="why they were listed as a possible duplicate, "
                                           "in words")
    reason: str = Field(description="why records staff decided they are two people")


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


class HandoverAcknowledgedData(_Data):
    handover_id: str
    shift: str
    acknowledged_at: str
    acknowledged_by: str
    acknowledged_by_name: str


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


class Spo2Scale2DecidedData(_Data):
    decided_at: str
    decided_by: str
    decided_by_name: str
    reason: str


class Spo2Scale2EndedData(_Data):
    ended_at: str
    ended_by: str
    ended_by_name: str
    reason: str


class ObservationsEscalatedData(_Data):
    observation_id: str
    told_whom: str
    told_at: str
    response: Literal["reviewed", "plan", "critical-care"]
    detail: str
    recorded_by: str
    recorded_by_name: str


class MergeCopied(_Data):
    """The retired record's documents a merge step moved, by kind (their ids)."""

    allergies: list[str] = Field(default_factory=list)
    admissions: list[str] = Field(default_factory=list)
    orders: list[str] = Field(default_factory=list)
    observations: list[str] = Field(default_factory=list)
    handovers: list[str] = Field(default_factory=list)


class MergeStepData(_Data):
    """One step of merging the *retired* record into the *survivor* (or of undoing it);
    both records and both MRNs are named in every step, in both streams."""

    merge_id: str
    survivor_id: str
    survivor_mrn: str
    retired_id: str
    retired_mrn: str
    reason: str = Field(description="why the records were merged (or the merge undone)")
    copied: MergeCopied | None = Field(
        None, description="the steps that move documents: what this one moved")
    part: int | None = Field(None, description="which batch of the documents, from 1")
    parts: int | None = None


# Every event type's data, by its name (a type another change adds names its model here).
DATA_MODELS: dict[str, type[BaseModel]] = {
    EventType.PATIENT_REGISTERED: PatientRegisteredData,
    EventType.DEMOGRAPHICS_UPDATED: DemographicsUpdatedData,
    EventType.ALLERGY_ADDED: Allergy,
    EventType.ALLERGY_REMOVED: AllergyRemovedData,
    EventType.NO_KNOWN_ALLERGIES_RECORDED: NoKnownAllergiesRecordedData,
    EventType.ADMISSION_STARTED: AdmissionStartedData,
    EventType.PATIENT_TRANSFERRED: PatientTransferredData,
    EventType.ADMISSION_ENDED: AdmissionEndedData,
    EventType.MEDICATION_PRESCRIBED: Order,
    EventType.IMAGING_EXAM_REQUESTED: Order,
    EventType.LAB_TEST_REQUESTED: Order,
    EventType.ORDER_READY: OrderProgressedData,
    EventType.ORDER_STARTED: OrderProgressedData,
    EventType.ORDER_COMPLETED: OrderProgressedData,
    EventType.ORDER_CANCELLED: OrderProgressedData,
    EventType.ORDER_ASSIGNED: OrderAssignedData,
    EventType.ORDER_UNASSIGNED: OrderAssignedData,
    EventType.ORDER_REPAIRED: OrderRepairedData,
    EventType.MEDICATION_ADMINISTERED: AdministrationData,
    EventType.MEDICATION_NOT_GIVEN: AdministrationData,
    EventType.RESULTS_RECORDED: ResultsRecordedData,
    EventType.RESULT_ACKNOWLEDGED: ResultAcknowledgedData,
    EventType.REFERENCE_ENTRY_ADDED: ReferenceEntrySavedData,
    EventType.REFERENCE_ENTRY_CHANGED: ReferenceEntrySavedData,
    EventType.BED_CLEANED: BedCleanedData,
    "NursesAssigned": NursesAssignedData,
    "HandoverWritten": Handover,
    "HandoverAcknowledged": HandoverAcknowledgedData,
    EventType.OBSERVATIONS_RECORDED: ObservationData,
    EventType.SPO2_SCALE2_DECIDED: Spo2Scale2DecidedData,
    EventType.SPO2_SCALE2_ENDED: Spo2Scale2EndedData,
    EventType.OBSERVATIONS_ESCALATED: ObservationsEscalatedData,
    EventType.PATIENT_MERGE_STARTED: MergeStepData,
    EventType.PATIENT_RECORDS_MERGED: MergeStepData,
    EventType.PATIENT_MERGED: MergeStepData,
    EventType.PATIENT_MERGE_ROLLED_BACK: MergeStepData,
    EventType.PATIENT_UNMERGE_STARTED: MergeStepData,
    EventType.PATIENT_RECORDS_RETURNED: MergeStepData,
    EventType.PATIENT_RECORDS_UNMERGED: MergeStepData,
    EventType.PATIENT_UNMERGED: MergeStepData,
    EventType.NOT_SAME_PERSON: NotSamePersonData,
}


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
