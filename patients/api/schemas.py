"""API schemas for the clinical record.

Every key the API reads or writes is snake_case; the stored documents and events keep their
camelCase, translated at this edge (``snake_keys``). Request bodies are strict: an unknown
property is a 422 naming it (``additionalProperties: false`` in the OpenAPI document), so a
client still sending an old or misspelt key learns it at once instead of losing the value.
Every string has a maximum length and refuses control and text-direction characters; dates
and times are ISO 8601 text, never numbers (:mod:`hisadmin.core.inputs`).
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field

from hisadmin.core.inputs import Amount, Instant, MultilineText, PastDate, Text
from patients.domain.mar import data_errors
from patients.domain.orders import KINDS, TRANSITIONS, OrderStatus, Urgency
from patients.domain.records import (
    CRITICALITIES,
    DISCHARGE_NOTE_MAX,
    DISPOSITIONS,
    REMOVAL_REASONS,
    SEVERITIES,
    SEXES,
    AllergyStatus,
    allergy_status,
    read_allergy,
)
from patients.events_public import public_event, snake_keys

# The vocabulary of the record, as the domain defines it (one place for every code).
Sex = Literal[SEXES]  # type: ignore[valid-type]
Severity = Literal[SEVERITIES]  # type: ignore[valid-type]
Criticality = Literal[CRITICALITIES]  # type: ignore[valid-type]
RemovalReason = Literal[REMOVAL_REASONS]  # type: ignore[valid-type]
AllergyStatusCode = Literal[tuple(s.value for s in AllergyStatus)]  # type: ignore[valid-type]
Disposition = Literal[DISPOSITIONS]  # type: ignore[valid-type]
Kind = Literal[tuple(KINDS)]  # type: ignore[valid-type]
Status = Literal[tuple(s.value for s in OrderStatus)]  # type: ignore[valid-type]
UrgencyCode = Literal[tuple(u.value for u in Urgency)]  # type: ignore[valid-type]
Action = Literal[tuple(TRANSITIONS)]  # type: ignore[valid-type]


class StrictIn(Schema):
    """A request body: unknown properties are refused (422), not silently dropped."""

    model_config = ConfigDict(extra="forbid")


Name = Text(100, min_length=1)
Code = Text(40)  # a reference-data code, an id
ShortCode = Text(20)  # a unit, a route, a bed, an MRN
CheckType = Text(40)
# Check type → the reason it is overridden (a few checks, each with a short reason).
Overrides = dict[CheckType, MultilineText(500)]
OVERRIDES_MAX = 10


class PatientIn(StrictIn):
    given_name: Name
    family_name: Name
    birth_date: PastDate = Field(description="YYYY-MM-DD, not in the future, from 1900")
    sex: Sex = "unknown"
    mrn: ShortCode = Field("", description="Leave empty to generate one.")
    confirm_not_duplicate: bool = Field(
        False, description="A patient with the same names (case and accents aside) and birth "
        "date gets 409 possible-duplicate listing the candidates; true registers anyway.")


class MergeLockOut(Schema):
    merge_id: str
    survivor_id: str
    survivor_mrn: str
    state: Literal["merging", "merged", "unmerging"] = Field(
        description="merging / unmerging: the merge (or its undo) is running, commands "
        "wait (409 merge-in-progress); merged: for good")


class MergeIn(StrictIn):
    """Merge the record ``retired_id`` into this one (the survivor): ``If-Match`` is the
    survivor's ETag, ``retired_etag`` the retired record's (both as read for the preview)."""

    retired_id: Code
    retired_etag: Text(100) = Field(description="the retired record's ETag (stale: 412)")
    reason: MultilineText(500) = Field(description="why: kept with the merge and its events")


class UnmergeIn(StrictIn):
    reason: MultilineText(500) = Field(description="why the merge is undone")


class MergedOut(Schema):
    """The survivor after the merge, and the merge's id (to undo it within a day)."""

    merge_id: str
    state: Literal["merged", "rolled_back", "unmerged"]
    patient: PatientOut


class PatientOut(Schema):
    id: str
    mrn: str
    given_name: str
    family_name: str
    birth_date: date
    sex: str
    allergy_status: AllergyStatusCode = Field(
        description="has_allergies (an active allergy), no_known_allergies (recorded as "
                    "such) or unknown (never asked)")
    no_known_allergies: NoKnownAllergiesOut | None = None
    allergies: list[AllergyOut] = Field(description="active and removed ones (see status)")
    merged_into: str | None = Field(
        None, description="the record this one was merged into (its id), once merged: this "
        "record stays readable and refuses every command (409 patient-merged, Location the "
        "survivor); null for a record of its own")
    merge: MergeLockOut | None = Field(
        None, description="the merge this record is the retired side of (while it runs and "
        "once merged); null for a record of its own")
    version: int
    etag: str


class DemographicsIn(StrictIn):
    given_name: Name
    family_name: Name
    birth_date: PastDate = Field(description="YYYY-MM-DD, not in the future, from 1900")
    sex: Sex


class AllergyIn(StrictIn):
    """An allergen from ``GET /api/v1/reference/allergens`` (``allergen_code``) or, when none
    fits, free text (``substance``, then not checkable by the order checks): one of the two."""

    allergen_code: Code | None = None
    substance: Text(100) = ""
    reaction: Text(200) = ""
    severity: Severity
    criticality: Criticality = "unable-to-assess"


class TransferIn(StrictIn):
    ward_id: Text(40, min_length=1)
    bed: ShortCode = ""


class OrderIn(StrictIn):
    kind: Kind
    urgency: UrgencyCode = Urgency.ROUTINE.value
    medication_code: Code = ""
    dose: Amount(gt=0, max_digits=10, decimal_places=3) | None = None
    unit: ShortCode = ""
    route: ShortCode = ""
    frequency: ShortCode = ""
    start_at: Instant | None = Field(None, description="ISO 8601 date and time; without an "
                                     "offset, the hospital's time (HOSPITAL_TIME_ZONE); "
                                     "default: when the order is placed")
    end_at: Instant | None = Field(None, description="ISO 8601 date and time, not before "
                                   "start_at; default: no end")
    as_needed: bool = False
    first_dose: Literal["next", "now"] = Field(
        "next", description="scheduled medication: 'next' — the first dose at the next "
        "standard time of its frequency (hospital's local time); 'now' — a one-off dose time "
        "at the start, then the standard times. ONCE/STAT: one dose time at the start")
    modality: ShortCode = ""
    body_part: Code = ""
    test_code: Code = ""
    note: MultilineText(500) = ""
    overrides: Overrides = Field(
        default_factory=dict, max_length=OVERRIDES_MAX,
        description="Order checks overridden, each with its reason: check type "
        "(allergy-status-unknown, allergy-conflict, dose-limit, duplicate-order) → reason. "
        "Every check that fails needs its own reason of at least 10 characters and two words, "
        "or the order is refused (409). A dose above the medication's hard limit is a 422 "
        "dose-hard-limit that no override passes.")


class ResultValueIn(StrictIn):
    analyte_code: Text(40, min_length=1)
    value: Amount(allow_inf_nan=False, max_digits=16, decimal_places=6)
    unit: ShortCode | None = Field(None, description="a Unit code; default: the "
                                   "analyte's unit. Another unit of the same dimension is "
                                   "converted")


class ActionIn(StrictIn):
    reason: MultilineText(300) = ""
    results: list[ResultValueIn] = Field(
        default_factory=list, max_length=100,
        description="complete a lab order: one value per analyte of its test")
    report: MultilineText(20_000) = Field("", description="complete an imaging order: the "
                        "report text (required, at most 10,000 characters); optional comment "
                        "on a lab order")


class AssignIn(StrictIn):
    assignee: Text(150) | None = Field(None, description="username; null to unassign")


AdministrationStatus = Literal["given", "not_given"]


class AdministrationIn(StrictIn):
    """A dose given (``dose``, ``unit``; ``administered_at`` default now) or not given
    (``reason``; ``reason_detail`` for other). ``slot_id`` or ``scheduled_for``: the dose
    time it answers (default: the one due)."""

    status: AdministrationStatus = "given"
    dose: Amount(gt=0, max_digits=10, decimal_places=3) | None = Field(
        None, description="given: at most the ordered dose")
    unit: ShortCode = Field("", description="given: a Unit code convertible to the "
                            "ordered unit")
    administered_at: Instant | None = Field(None, description="when it happened, not in "
                                            "the future; default now (ISO 8601; without an "
                                            "offset, the hospital's time)")
    reason: Text(40) | None = Field(None, description="not given: why — refused | "
                                    "held | unavailable | patient-absent | other")
    reason_detail: MultilineText(300) = Field("", description="the text for reason other")
    slot_id: Text(120) = Field("", description="the dose time (slot) answered, as the MAR "
                               "and Medications due name it; or give scheduled_for")
    scheduled_for: Instant | None = Field(None, description="the order's dose time answered, "
                                          "at any precision (compared to the minute). "
                                          "Neither given: the one slot due at the dose's "
                                          "time; none or several → 422 on slot_id with "
                                          "candidates [{slot_id, scheduled_for, status}]")
    note: MultilineText(300) = ""
    overrides: Overrides = Field(
        default_factory=dict, max_length=OVERRIDES_MAX, description="prn-interval → reason, "
        "to give an as-needed dose sooner than its least interval")
    scanned_id: Text(64) = Field("", description="what the bedside scanner read from the "
                                 "patient's wristband (the MRN): another patient's → 409 "
                                 "wrong-patient with conflicts, nothing recorded; the "
                                 "patient's → kept as identity_confirmed_by scan")


class AdmitIn(StrictIn):
    department_id: Text(40, min_length=1)
    ward_id: Text(40, min_length=1)
    bed: ShortCode = ""
    reason: MultilineText(500, min_length=1)
    attending: Text(150) = Field("", description="username of the attending clinician "
                                 "(optional)")
    attending_name: Text(100) = Field("", description="free-text attending, when not a "
                                      "user here")


class AdmissionOut(Schema):
    id: str
    patient_id: str
    status: str
    department_id: str
    ward_id: str
    bed: str | None
    attending_name: str
    reason: str
    started_at: str
    ended_at: str | None
    disposition: str | None
    discharge_note: str = ""
    etag: str


class DischargeIn(StrictIn):
    disposition: Disposition
    note: MultilineText(DISCHARGE_NOTE_MAX) = Field("", description="The discharge note.")
    cancel_orders: list[Text(60)] | None = Field(
        None, max_length=200, description="The ids of the active orders you expect discharge "
        "to cancel; when given and the stay's active orders differ, 409 orders-changed and "
        "nothing is written. Left out: every active order is cancelled (each named in the "
        "audit trail).")


class ActorOut(Schema):
    id: str | None
    username: str
    display_name: str


class EventOut(Schema):
    """An event in its one public form (:func:`patients.events_public.public_event`; each
    type's ``data``: docs/events.md)."""

    event_id: str | None
    type: str
    schema_version: int
    patient_id: str | None
    seq: int
    occurred_at: str
    actor: ActorOut
    data: dict[str, Any]


class EventPage(Schema):
    items: list[EventOut]
    continuation: str | None


class AllergyOut(Schema):
    allergy_id: str
    allergen_code: str | None = None
    substance: str = Field(description="the allergen's name, or the free text")
    checkable: bool = Field(description="true iff coded (allergen_code set)")
    reaction: str
    severity: str
    criticality: Criticality
    status: Literal["active", "removed"]
    recorded_at: str
    recorded_by: str
    removed_at: str | None = None
    removed_by: str | None = None
    removal_reason: RemovalReason | None = None
    removal_detail: str | None = None


class NoKnownAllergiesOut(Schema):
    recorded_at: str
    recorded_by: str


class AdministrationOut(Schema):
    """One administration (a dose given or not given), the same in an order's
    ``administrations`` and in the MAR (:func:`administration_out`)."""

    administration_id: str
    status: AdministrationStatus = "given"
    recorded_at: str = Field(description="when it was recorded")
    administered_at: str = Field(description="when it happened (older entries: when it "
                                 "was recorded)")
    scheduled_for: str | None = Field(None, description="the dose time it answered")
    slot_id: str | None = Field(None, description="the dose time (slot) it closed")
    dose: str | None = None
    unit: str | None = None
    reason: str | None = None
    reason_detail: str | None = None
    override: dict[str, Any] | None = Field(None, description="the first guard overridden "
                                            "(the first of overrides), as before overrides")
    overrides: list[OverrideOut] = Field(
        default_factory=list, description="every guard the dose overrode (early-dose, "
        "dose-interval, daily-dose; early-not-given for a dose not given), each with what it said, the reason, who and when: "
        "{check, detail, reason, by, at}; empty when none")
    by: str
    note: str = ""
    identity_confirmed_by: Literal["scan"] | None = Field(
        None, description="scan: the patient's wristband was scanned and matched; null: "
        "not scanned")


class DataErrorOut(Schema):
    """A stored field that could not be read (older data, a restore, another writer): the
    rest of the answer stands; the field is shown as stored, and means nothing."""

    field: str = Field(description="the stored field's name, e.g. startAt")
    message: str = Field(description="what could not be done with it, e.g. \"start time "
                         "could not be read\"")


class OrderOut(Schema):
    """An order as stored (see docs/data-model.md); kind-specific fields are null otherwise."""

    order_id: str
    patient_id: str
    admission_id: str
    kind: Kind
    status: Status
    urgency: UrgencyCode
    description: str
    department_id: str
    ward_id: str | None = None
    assignee_id: str | None = None
    assignee_name: str | None = None
    placed_at: str
    placed_by: str
    cancel_reason: str | None = None
    administrations: list[AdministrationOut] = []
    version: int
    etag: str
    medication_code: str | None = None
    medication_name: str | None = None
    dose: str | None = None
    unit: str | None = None
    route: str | None = None
    frequency: str | None = None
    start_at: str | None = None
    end_at: str | None = None
    ended_at: str | None = Field(None, description="when a completed or cancelled order "
                                 "ended: no dose time after it")
    schedule: dict[str, Any] | None = Field(
        None, description="a scheduled medication's dose times: {times: [HH:MM local], "
        "time_zone, min_interval_hours, first_dose_at} or {once: true}; null: as needed, or "
        "every frequency_hours from the start (orders placed before schedules)")
    as_needed: bool | None = None
    modality: str | None = None
    body_part: str | None = None
    data_errors: list[DataErrorOut] = Field(
        [], description="stored fields that could not be read; empty when all could")
    test_code: str | None = None
    test_name: str | None = None
    note: str | None = None
    overrides: list[OverrideOut] = Field(
        default_factory=list, description="order checks overridden when it was placed")
    results: dict[str, Any] | None = Field(
        None, description="a completed lab or imaging order's results: {values: [{analyte, "
        "name, value, unit, low, high, flag}], report, resulted_at, resulted_by, "
        "acknowledged_at, acknowledged_by}")


class OverrideOut(Schema):
    check: str
    detail: str
    reason: str
    by: str
    at: str


class FieldError(Schema):
    field: str = Field(description="the field at fault, dotted for a nested one")
    message: str


class Problem(Schema):
    """An RFC 9457 problem document (``application/problem+json``)."""

    type: str = Field(description="about:blank, or /api/v1/problems/<kind>")
    title: str
    status: int
    detail: str
    code: str | None = Field(None, description="the domain error, e.g. BedOccupied")
    merged_into: str | None = Field(None, description="409 patient-merged / merge-in-progress:"
                                    " the record this one is merged into (Location too)")
    merged_into_mrn: str | None = None
    merge_id: str | None = None
    errors: list[FieldError] | None = Field(None, description="the fields at fault")
    current_etag: str | None = Field(None, description="412 only: the version stored now")


class ConflictOut(Schema):
    type: str = Field(description="a check type: allergy-status-unknown | allergy-conflict | "
                      "dose-limit | duplicate-order (placing an order); early-dose | "
                      "dose-interval | daily-dose (recording a dose given); early-not-given "
                      "(a dose recorded as not given before its time); wrong-patient "
                      "(a wristband scanned that is not the patient's)")
    detail: str
    reason_refused: str | None = Field(None, description="present when a reason was given "
                                       "for this check but does not count (at least 10 "
                                       "characters and two words), and why")


class OrderConflictsProblem(Problem):
    """A refused order: ``type`` is ``/api/v1/problems/<check>`` for the first check without
    an override reason (allergy, then dose, then duplicate)."""

    conflicts: list[ConflictOut] = Field(
        description="every check that failed; resend with overrides {type: reason} for each")


ERRORS_SCHEMA = {400: Problem, 401: Problem, 403: Problem, 404: Problem, 409: Problem,
                 412: Problem, 422: Problem}


def patient_out(c: dict[str, Any]) -> dict[str, Any]:
    lock = c.get("mergedInto") or None
    return {"id": c["patientId"], "mrn": c["mrn"], "given_name": c["givenName"],
            "family_name": c["familyName"], "birth_date": c["birthDate"], "sex": c["sex"],
            **allergies_out(c),
            "merged_into": lock["survivorId"] if lock and lock["state"] == "merged" else None,
            "merge": lock and snake_keys(lock), "version": c.get("version", 1),
            "etag": c["etag"]}


def allergies_out(c: dict[str, Any]) -> dict[str, Any]:
    """The allergy part of a patient: every allergy (older ones read as active, free text),
    the status derived from them and the "no known allergies" record."""
    nka = c.get("noKnownAllergies") or None
    return {"allergies": [snake_keys(read_allergy(a)) for a in c.get("allergies", [])],
            "allergy_status": str(allergy_status(c.get("allergies", []), nka)),
            "no_known_allergies": nka and {"recorded_at": nka["recordedAt"],
                                           "recorded_by": nka["recordedBy"]}}


def admission_out(c: dict[str, Any]) -> dict[str, Any]:
    return {"id": c["admissionId"], "patient_id": c["patientId"], "status": c["status"],
            "department_id": c["departmentId"], "ward_id": c["wardId"], "bed": c.get("bed"),
            "attending_name": c.get("attendingName", ""), "reason": c.get("reason", ""),
            "started_at": c["startedAt"], "ended_at": c.get("endedAt"),
            "disposition": c.get("disposition"),
            "discharge_note": c.get("dischargeNote", ""), "etag": c["etag"]}


_ORDER_FIELDS = frozenset(OrderOut.model_fields)


def administration_out(e: dict[str, Any]) -> dict[str, Any]:
    """An administration as kept on the order, as :class:`AdministrationOut` (an entry kept
    before overrides lists its single ``override``; one kept before ``administeredAt`` was
    given when it was recorded)."""
    return {"administration_id": e["administrationId"], "status": e.get("status") or "given",
            "recorded_at": e["at"], "administered_at": e.get("administeredAt") or e["at"],
            "scheduled_for": e.get("scheduledFor"), "slot_id": e.get("slotId"),
            "dose": e.get("dose"), "unit": e.get("unit"), "reason": e.get("reason"),
            "reason_detail": e.get("reasonDetail"), "override": snake_keys(e.get("override")),
            "overrides": snake_keys(e.get("overrides")
                                    or ([e["override"]] if e.get("override") else [])),
            "by": e.get("by", ""), "note": e.get("note") or "",
            "identity_confirmed_by": e.get("identityConfirmedBy")}


def order_out(c: dict[str, Any]) -> dict[str, Any]:
    """An order as stored, snake_case, its documented fields only (overrides always; each
    administration as :func:`administration_out`)."""
    order = snake_keys({"overrides": [], **{k: v for k, v in c.items()
                                             if k != "administrations"}})
    order["administrations"] = [administration_out(e) for e in c.get("administrations") or []]
    return {**{k: v for k, v in order.items() if k in _ORDER_FIELDS},
            "data_errors": data_errors(c)}


def event_out(c: dict[str, Any], patient_id: str) -> dict[str, Any]:
    """A stored event of ``patient_id``'s stream in its public form."""
    return public_event(c, patient_id=patient_id)
