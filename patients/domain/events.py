"""The patient record's events: their names and payload shapes, defined once.

Use cases return these; the repository stores ``payload()`` (camelCase, as every stored
event has been) in the patient's stream; projections, pages and the API read them through
:class:`EventType` and the field names documented here. Plain Python: no Django, no store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar


class EventType(StrEnum):
    PATIENT_REGISTERED = "PatientRegistered"
    DEMOGRAPHICS_UPDATED = "PatientDemographicsUpdated"
    ALLERGY_ADDED = "AllergyAdded"
    ALLERGY_REMOVED = "AllergyRemoved"
    NO_KNOWN_ALLERGIES_RECORDED = "NoKnownAllergiesRecorded"
    ADMISSION_STARTED = "AdmissionStarted"
    PATIENT_TRANSFERRED = "PatientTransferred"
    ADMISSION_ENDED = "AdmissionEnded"
    MEDICATION_PRESCRIBED = "MedicationPrescribed"
    IMAGING_EXAM_REQUESTED = "ImagingExamRequested"
    LAB_TEST_REQUESTED = "LabTestRequested"
    ORDER_READY = "OrderReady"
    ORDER_STARTED = "OrderStarted"
    ORDER_COMPLETED = "OrderCompleted"
    ORDER_CANCELLED = "OrderCancelled"
    ORDER_ASSIGNED = "OrderAssigned"
    ORDER_UNASSIGNED = "OrderUnassigned"
    ORDER_REPAIRED = "OrderRepaired"
    MEDICATION_ADMINISTERED = "MedicationAdministered"
    MEDICATION_NOT_GIVEN = "MedicationNotGiven"
    RESULTS_RECORDED = "ResultsRecorded"
    RESULT_ACKNOWLEDGED = "ResultAcknowledged"
    # reference data (in the reference type's own stream)
    REFERENCE_ENTRY_ADDED = "ReferenceEntryAdded"
    REFERENCE_ENTRY_CHANGED = "ReferenceEntryChanged"
    # beds (in the ward's own stream)
    BED_CLEANED = "BedCleaned"
    # a shift's nurses by bed (in the ward's own stream)
    NURSES_ASSIGNED = "NursesAssigned"
    # shift handover of one patient (in the patient's stream)
    HANDOVER_WRITTEN = "HandoverWritten"
    HANDOVER_ACKNOWLEDGED = "HandoverAcknowledged"
    # observations and their early-warning score (in the patient's stream)
    OBSERVATIONS_RECORDED = "ObservationsRecorded"
    SPO2_SCALE2_DECIDED = "Spo2Scale2Decided"
    SPO2_SCALE2_ENDED = "Spo2Scale2Ended"
    OBSERVATIONS_ESCALATED = "ObservationsEscalated"
    # merging a duplicate registration into the surviving record (a saga over both streams)
    PATIENT_MERGE_STARTED = "PatientMergeStarted"  # retired's stream: the record is locked
    PATIENT_RECORDS_MERGED = "PatientRecordsMerged"  # survivor's: it gained the history
    PATIENT_MERGED = "PatientMerged"  # retired's: merged into the survivor (for good)
    PATIENT_MERGE_ROLLED_BACK = "PatientMergeRolledBack"  # retired's: unlocked, not merged
    PATIENT_UNMERGE_STARTED = "PatientUnmergeStarted"  # retired's: the undo began
    PATIENT_RECORDS_RETURNED = "PatientRecordsReturned"  # retired's: its history came back
    PATIENT_RECORDS_UNMERGED = "PatientRecordsUnmerged"  # survivor's: the copies removed
    PATIENT_UNMERGED = "PatientUnmerged"  # retired's: a record of its own again
    # records staff decided two registrations are two people (in the pairs' own stream)
    NOT_SAME_PERSON = "NotSamePerson"


# What the audit trail calls each event.
EVENT_LABELS: dict[EventType, str] = {
    EventType.PATIENT_REGISTERED: "Registered",
    EventType.DEMOGRAPHICS_UPDATED: "Demographics corrected",
    EventType.ALLERGY_ADDED: "Allergy recorded",
    EventType.ALLERGY_REMOVED: "Allergy removed",
    EventType.NO_KNOWN_ALLERGIES_RECORDED: "No known allergies",
    EventType.ADMISSION_STARTED: "Admitted",
    EventType.PATIENT_TRANSFERRED: "Transferred",
    EventType.ADMISSION_ENDED: "Discharged",
    EventType.MEDICATION_PRESCRIBED: "Medication prescribed",
    EventType.IMAGING_EXAM_REQUESTED: "Imaging requested",
    EventType.LAB_TEST_REQUESTED: "Lab test requested",
    EventType.ORDER_READY: "Order ready",
    EventType.ORDER_STARTED: "Order started",
    EventType.ORDER_COMPLETED: "Order completed",
    EventType.ORDER_CANCELLED: "Order cancelled",
    EventType.ORDER_ASSIGNED: "Order assigned",
    EventType.ORDER_UNASSIGNED: "Order unassigned",
    EventType.ORDER_REPAIRED: "Order corrected",
    EventType.MEDICATION_ADMINISTERED: "Dose given",
    EventType.MEDICATION_NOT_GIVEN: "Dose not given",
    EventType.RESULTS_RECORDED: "Results recorded",
    EventType.RESULT_ACKNOWLEDGED: "Results reviewed",
    EventType.REFERENCE_ENTRY_ADDED: "Reference entry added",
    EventType.REFERENCE_ENTRY_CHANGED: "Reference entry changed",
    EventType.BED_CLEANED: "Bed cleaned",
    EventType.NURSES_ASSIGNED: "Nurses assigned",
    EventType.HANDOVER_WRITTEN: "Handover written",
    EventType.HANDOVER_ACKNOWLEDGED: "Handover acknowledged",
    EventType.OBSERVATIONS_RECORDED: "Observations recorded",
    EventType.SPO2_SCALE2_DECIDED: "SpO2 scale 2 decided",
    EventType.SPO2_SCALE2_ENDED: "SpO2 scale 2 ended",
    EventType.OBSERVATIONS_ESCALATED: "Early warning score escalated",
    EventType.PATIENT_MERGE_STARTED: "Merge into another record started",
    EventType.PATIENT_RECORDS_MERGED: "Records merged in from a duplicate",
    EventType.PATIENT_MERGED: "Merged into another record",
    EventType.PATIENT_MERGE_ROLLED_BACK: "Merge rolled back",
    EventType.PATIENT_UNMERGE_STARTED: "Merge undo started",
    EventType.PATIENT_RECORDS_RETURNED: "Records returned from the merge",
    EventType.PATIENT_RECORDS_UNMERGED: "Merged records removed (merge undone)",
    EventType.PATIENT_UNMERGED: "Merge undone",
    EventType.NOT_SAME_PERSON: "Not the same person",
}

# The event that places an order of each kind.
ORDER_PLACED: dict[str, EventType] = {
    "medication": EventType.MEDICATION_PRESCRIBED,
    "imaging": EventType.IMAGING_EXAM_REQUESTED,
    "lab": EventType.LAB_TEST_REQUESTED,
}


@dataclass(frozen=True)
class Event:
    """One thing that happened to a patient's record."""

    type: ClassVar[EventType]
    # Every type an event of the class may be stored as (one, unless ``event_type`` says
    # which of several: per order kind, per transition…).
    stored_as: ClassVar[tuple[EventType, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "stored_as" not in cls.__dict__:
            cls.stored_as = (cls.type,)

    @property
    def event_type(self) -> EventType:
        """The stored type name (per kind or transition where one class has several)."""
        return self.type

    def payload(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class PatientRegistered(Event):
    type = EventType.PATIENT_REGISTERED
    patient_id: str
    mrn: str
    given_name: str
    family_name: str
    birth_date: str
    sex: str

    def payload(self) -> dict[str, Any]:
        return {"patientId": self.patient_id, "mrn": self.mrn, "givenName": self.given_name,
                "familyName": self.family_name, "birthDate": self.birth_date, "sex": self.sex}


@dataclass(frozen=True)
class DemographicsUpdated(Event):
    """``changes``: the corrected fields' new values; ``previous``: their old ones."""

    type = EventType.DEMOGRAPHICS_UPDATED
    changes: dict[str, Any]
    previous: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {**self.changes, "previous": self.previous}


@dataclass(frozen=True)
class AllergyAdded(Event):
    """``allergy``: the new allergy as recorded on the patient (see ``Patient.add_allergy``):
    ``allergyId``, ``allergenCode`` (None: free text), ``substance``, ``checkable``,
    ``reaction``, ``severity``, ``criticality``, ``status``, ``recordedAt``, ``recordedBy``.
    Adding an allergy ends a recorded "no known allergies"."""

    type = EventType.ALLERGY_ADDED
    allergy: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return dict(self.allergy)


@dataclass(frozen=True)
class AllergyRemoved(Event):
    """The allergy stays on the record, marked removed; ``reason`` is ``entered-in-error``,
    ``resolved`` or ``other`` (then ``detail`` says why)."""

    type = EventType.ALLERGY_REMOVED
    allergy_id: str
    substance: str
    reason: str = ""
    detail: str = ""

    def payload(self) -> dict[str, Any]:
        return {"allergyId": self.allergy_id, "substance": self.substance,
                "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class NoKnownAllergiesRecorded(Event):
    """Someone asked and the patient has no known allergies (an explicit act)."""

    type = EventType.NO_KNOWN_ALLERGIES_RECORDED
    recorded_at: str
    recorded_by: str

    def payload(self) -> dict[str, Any]:
        return {"recordedAt": self.recorded_at, "recordedBy": self.recorded_by}


@dataclass(frozen=True)
class AdmissionStarted(Event):
    type = EventType.ADMISSION_STARTED
    admission_id: str
    department_id: str
    ward_id: str
    bed: str | None
    attending_id: str
    attending_name: str
    reason: str
    started_at: str

    def payload(self) -> dict[str, Any]:
        return {"admissionId": self.admission_id, "departmentId": self.department_id,
                "wardId": self.ward_id, "bed": self.bed, "attendingId": self.attending_id,
                "attendingName": self.attending_name, "reason": self.reason,
                "startedAt": self.started_at}


@dataclass(frozen=True)
class PatientTransferred(Event):
    """``move``: the transfer as recorded on the admission (see ``Admission.transfer``)."""

    type = EventType.PATIENT_TRANSFERRED
    admission_id: str
    move: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {"admissionId": self.admission_id, **self.move}


@dataclass(frozen=True)
class AdmissionEnded(Event):
    type = EventType.ADMISSION_ENDED
    admission_id: str
    disposition: str | None
    ended_at: str | None
    ward_id: str
    bed: str | None
    note: str = ""  # the discharge note

    def payload(self) -> dict[str, Any]:
        return {"admissionId": self.admission_id, "disposition": self.disposition,
                "endedAt": self.ended_at, "wardId": self.ward_id, "bed": self.bed,
                "note": self.note}


@dataclass(frozen=True)
class OrderPlaced(Event):
    """``order``: the whole order as placed (``Order.as_record()``); its type is per kind."""

    type = EventType.MEDICATION_PRESCRIBED  # see event_type: one per kind
    stored_as = tuple(ORDER_PLACED.values())
    kind: str
    order: dict[str, Any]

    @property
    def event_type(self) -> EventType:
        return ORDER_PLACED[self.kind]

    def payload(self) -> dict[str, Any]:
        return dict(self.order)


@dataclass(frozen=True)
class OrderProgressed(Event):
    """Ready, started, completed or cancelled: ``status`` is the order's new status;
    ``endedAt`` when it completed or was cancelled."""

    type = EventType.ORDER_READY  # see event_type: one per transition
    stored_as = (EventType.ORDER_READY, EventType.ORDER_STARTED, EventType.ORDER_COMPLETED,
                 EventType.ORDER_CANCELLED)
    progress: EventType
    order_id: str
    status: str
    cancel_reason: str | None = None
    ended_at: str | None = None  # completed or cancelled: when its course ended

    @property
    def event_type(self) -> EventType:
        return self.progress

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {"orderId": self.order_id, "status": self.status}
        if self.cancel_reason:
            data["cancelReason"] = self.cancel_reason
        if self.ended_at:
            data["endedAt"] = self.ended_at
        return data


@dataclass(frozen=True)
class OrderAssigned(Event):
    """An assignment (``assignee_id`` set) or an unassignment (``None``)."""

    type = EventType.ORDER_ASSIGNED
    stored_as = (EventType.ORDER_ASSIGNED, EventType.ORDER_UNASSIGNED)
    order_id: str
    assignee_id: str | None
    assignee_name: str | None

    @property
    def event_type(self) -> EventType:
        return EventType.ORDER_ASSIGNED if self.assignee_id else EventType.ORDER_UNASSIGNED

    def payload(self) -> dict[str, Any]:
        return {"orderId": self.order_id, "assigneeId": self.assignee_id,
                "assigneeName": self.assignee_name}


# The stored order fields a repair may set (camelCase as stored) → the command's name.
REPAIRABLE_ORDER_FIELDS: dict[str, str] = {"startAt": "start_at", "endAt": "end_at"}


@dataclass(frozen=True)
class OrderRepaired(Event):
    """A stored order field that could not be read (older data, a restore, another writer)
    set to a valid value: ``field`` (camelCase, one of :data:`REPAIRABLE_ORDER_FIELDS`), the
    ``previous`` value as it was stored and the new ``value``."""

    type = EventType.ORDER_REPAIRED
    order_id: str
    field: str
    previous: Any
    value: Any

    def payload(self) -> dict[str, Any]:
        return {"orderId": self.order_id, "field": self.field, "previous": self.previous,
                "value": self.value}


@dataclass(frozen=True)
class MedicationAdministered(Event):
    """``record``: the administration as kept on the order."""

    type = EventType.MEDICATION_ADMINISTERED
    order_id: str
    record: dict[str, Any] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return {"orderId": self.order_id, **self.record}


@dataclass(frozen=True)
class MedicationNotGiven(Event):
    """A scheduled (or as-needed) dose recorded as not given: ``record`` as kept on the order
    (``status`` not_given, ``reason``, ``reasonDetail``, ``scheduledFor``)."""

    type = EventType.MEDICATION_NOT_GIVEN
    order_id: str
    record: dict[str, Any] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        return {"orderId": self.order_id, **self.record}



@dataclass(frozen=True)
class ResultsRecorded(Event):
    """A lab or imaging order's results, recorded as it completed (with ``OrderCompleted``,
    in the same batch). ``placed_by``: the ordering clinician's id (whose results to review);
    ``flags``: ``{abnormal, high: [analyte codes], low: [analyte codes]}``; ``results``: as
    kept on the order (``{values, report, resultedAt, resultedBy}``)."""

    type = EventType.RESULTS_RECORDED
    order_id: str
    placed_by: str
    kind: str
    description: str
    flags: dict[str, Any]
    results: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {"orderId": self.order_id, "placedBy": self.placed_by, "kind": self.kind,
                "description": self.description, "flags": self.flags,
                "results": self.results}


@dataclass(frozen=True)
class ResultAcknowledged(Event):
    """A clinician marked an order's results reviewed."""

    type = EventType.RESULT_ACKNOWLEDGED
    order_id: str
    placed_by: str
    acknowledged_at: str
    acknowledged_by: str

    def payload(self) -> dict[str, Any]:
        return {"orderId": self.order_id, "placedBy": self.placed_by,
                "acknowledgedAt": self.acknowledged_at, "acknowledgedBy": self.acknowledged_by}


@dataclass(frozen=True)
class ReferenceEntrySaved(Event):
    """An entry of reference data added (``previous`` None) or changed (retired included:
    ``entry["active"]`` false). ``entry`` and ``previous`` are the whole entries."""

    type = EventType.REFERENCE_ENTRY_ADDED  # see event_type: added or changed
    stored_as = (EventType.REFERENCE_ENTRY_ADDED, EventType.REFERENCE_ENTRY_CHANGED)
    type_name: str
    code: str
    entry: dict[str, Any]
    previous: dict[str, Any] | None = None

    @property
    def event_type(self) -> EventType:
        return (EventType.REFERENCE_ENTRY_ADDED if self.previous is None
                else EventType.REFERENCE_ENTRY_CHANGED)

    def payload(self) -> dict[str, Any]:
        changed = sorted(k for k in {*self.entry, *(self.previous or {})}
                         if (self.previous or {}).get(k) != self.entry.get(k))
        return {"referenceType": self.type_name, "code": self.code, "entry": self.entry,
                "previous": self.previous, "changed": changed}


@dataclass(frozen=True)
class BedCleaned(Event):
    """A bed left by ``admission_id`` was marked clean (free again), in its ward's stream."""

    type = EventType.BED_CLEANED
    ward_id: str
    bed: str
    admission_id: str | None
    cleaning_since: str | None

    def payload(self) -> dict[str, Any]:
        return {"wardId": self.ward_id, "bed": self.bed, "admissionId": self.admission_id,
                "cleaningSince": self.cleaning_since}


@dataclass(frozen=True)
class NursesAssigned(Event):
    """A nurse in charge set who looks after which bed of ``ward_id`` in ``shift`` (e.g.
    ``2026-11-25-day``), in the ward's stream. ``assignments`` and ``previous``: bed →
    ``{nurseId, nurseName}``, the whole shift after and before (so every nurse who gained or
    lost a bed is named in the event)."""

    type = EventType.NURSES_ASSIGNED
    ward_id: str
    shift: str
    assignments: dict[str, Any]
    previous: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {"wardId": self.ward_id, "shift": self.shift, "assignments": self.assignments,
                "previous": self.previous}


@dataclass(frozen=True)
class HandoverWritten(Event):
    """The outgoing nurse's SBAR note on a patient for ``shift`` (the shift handing over):
    ``handover`` as kept on the record (``handoverId``, ``shift``, ``wardId``, ``bed``,
    ``situation``, ``background``, ``assessment``, ``recommendation``, ``writtenAt``,
    ``writtenBy``, ``writtenByName``)."""

    type = EventType.HANDOVER_WRITTEN
    handover: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return dict(self.handover)


@dataclass(frozen=True)
class HandoverAcknowledged(Event):
    """The incoming nurse has read and taken over a handover."""

    type = EventType.HANDOVER_ACKNOWLEDGED
    handover_id: str
    shift: str
    acknowledged_at: str
    acknowledged_by: str
    acknowledged_by_name: str

    def payload(self) -> dict[str, Any]:
        return {"handoverId": self.handover_id, "shift": self.shift,
                "acknowledgedAt": self.acknowledged_at, "acknowledgedBy": self.acknowledged_by,
                "acknowledgedByName": self.acknowledged_by_name}


@dataclass(frozen=True)
class ObservationsRecorded(Event):
    """An observation set as kept on the record (``observationId``, ``takenAt``, the values
    of :data:`patients.domain.observations.FIELDS` in camelCase, ``flags``, ``news2``:
    ``{score, risk, parameterScores, complete, missing, scale, nextDueAt}``, ``wardId``,
    ``bed``, ``recordedAt``, ``recordedBy``, ``recordedByName``)."""

    type = EventType.OBSERVATIONS_RECORDED
    observation: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return dict(self.observation)


@dataclass(frozen=True)
class Spo2Scale2Decided(Event):
    """A clinician prescribed a target SpO2 of 88–92 %: sets are scored on SpO2 scale 2 from
    now until the decision is ended."""

    type = EventType.SPO2_SCALE2_DECIDED
    decided_at: str
    decided_by: str
    decided_by_name: str
    reason: str

    def payload(self) -> dict[str, Any]:
        return {"decidedAt": self.decided_at, "decidedBy": self.decided_by,
                "decidedByName": self.decided_by_name, "reason": self.reason}


@dataclass(frozen=True)
class Spo2Scale2Ended(Event):
    """The scale 2 decision ended by a clinician: sets are scored on scale 1 again."""

    type = EventType.SPO2_SCALE2_ENDED
    ended_at: str
    ended_by: str
    ended_by_name: str
    reason: str

    def payload(self) -> dict[str, Any]:
        return {"endedAt": self.ended_at, "endedBy": self.ended_by,
                "endedByName": self.ended_by_name, "reason": self.reason}


@dataclass(frozen=True)
class ObservationsEscalated(Event):
    """A nurse told someone of a set's score: who (``toldWhom``), when (``toldAt``) and the
    response (``response``: reviewed | plan | critical-care, ``detail``)."""

    type = EventType.OBSERVATIONS_ESCALATED
    observation_id: str
    told_whom: str
    told_at: str
    response: str
    detail: str
    recorded_by: str
    recorded_by_name: str

    def payload(self) -> dict[str, Any]:
        return {"observationId": self.observation_id, "toldWhom": self.told_whom,
                "toldAt": self.told_at, "response": self.response, "detail": self.detail,
                "recordedBy": self.recorded_by, "recordedByName": self.recorded_by_name}


# ------------------------------------------------------------------ merging two records
@dataclass(frozen=True)
class MergeEvent(Event):
    """One step of merging a duplicate registration (the *retired* record) into the
    *survivor*, or of undoing it (:mod:`patients.use_cases.merges`). ``step`` is the event
    type; every step names the merge, both records and both MRNs, so each stream's audit
    trail keeps both. ``copied``: the retired record's documents the step moved, by kind
    (``allergies``, ``admissions``, ``orders``, ``observations``, ``handovers``: ids), for
    the steps that move them; ``part`` / ``parts``: which batch of them."""

    type = EventType.PATIENT_MERGED  # see event_type: one per step
    stored_as = (EventType.PATIENT_MERGE_STARTED, EventType.PATIENT_RECORDS_MERGED,
                 EventType.PATIENT_MERGED, EventType.PATIENT_MERGE_ROLLED_BACK,
                 EventType.PATIENT_UNMERGE_STARTED, EventType.PATIENT_RECORDS_RETURNED,
                 EventType.PATIENT_RECORDS_UNMERGED, EventType.PATIENT_UNMERGED)
    step: EventType
    merge_id: str
    survivor_id: str
    survivor_mrn: str
    retired_id: str
    retired_mrn: str
    reason: str = ""
    copied: dict[str, list[str]] | None = None
    part: int | None = None
    parts: int | None = None

    @property
    def event_type(self) -> EventType:
        return self.step

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {"mergeId": self.merge_id, "survivorId": self.survivor_id,
                                "survivorMrn": self.survivor_mrn,
                                "retiredId": self.retired_id, "retiredMrn": self.retired_mrn,
                                "reason": self.reason}
        if self.copied is not None:
            data["copied"] = {k: list(v) for k, v in self.copied.items()}
        if self.part is not None:
            data.update(part=self.part, parts=self.parts)
        return data


MERGE_EVENTS = frozenset(MergeEvent.stored_as)


@dataclass(frozen=True)
class NotSamePerson(Event):
    """Records staff decided that two registrations listed as a possible duplicate are two
    people (``pairId``; ``patients``: ``{patientId, mrn}`` each; ``reasons``: why they were
    listed; ``reason``: why they are not one), in the pairs' own stream."""

    type = EventType.NOT_SAME_PERSON
    pair_id: str
    patients: list[dict[str, str]]
    reasons: list[str]
    reason: str

    def payload(self) -> dict[str, Any]:
        return {"pairId": self.pair_id, "patients": self.patients, "reasons": self.reasons,
                "reason": self.reason}
