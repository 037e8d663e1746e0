"""Projection rules, pure: events fold into a per-patient state.

Two ways to the same state: :func:`fold` applies one event to the state of the previous
sequence number; :func:`from_source` builds it from the patient's record (the source of
truth, as domain objects) when an event cannot be applied in sequence (a gap, an unknown
event type, data the fold cannot trust). :func:`step` is the version guard deciding between
them; it is the whole exactly-once-in-effect argument and is tested with shuffled,
duplicated deliveries. The state's rows are built in :mod:`worklists.projection.rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from patients.domain import observation_summary as observed
from patients.domain.events import MERGE_EVENTS, ORDER_PLACED, REPAIRABLE_ORDER_FIELDS, EventType
from patients.domain.merges import LockState
from patients.domain.orders import ACTIVE, ORDER_STATUS_AFTER, Order, OrderStatus
from patients.domain.records import Admission, AdmissionStatus, Patient, active_allergies
from patients.domain.results import RESULT_KINDS, abnormal_in_words, flags_summary
from worklists.projection import census
from worklists.projection.state import SHAPE, PatientState, Row, RowKey

PATIENT_FIELDS = ("mrn", "givenName", "familyName", "birthDate", "sex")
ADMISSION_FIELDS = ("admissionId", "departmentId", "wardId", "bed", "attendingId",
                    "attendingName", "startedAt")
ORDER_FIELDS = ("orderId", "admissionId", "kind", "status", "urgency", "description",
                "departmentId", "wardId", "assigneeId", "assigneeName", "placedAt")
ORDER_KIND_BY_EVENT = {event: kind for kind, event in ORDER_PLACED.items()}
# A medication order's schedule, kept for "Medications due" (``recorded``: the dose times
# answered, given or not given, as stored instants).
MEDICATION_FIELDS = ("medicationName", "dose", "unit", "route", "startAt", "endAt",
                     "frequencyHours", "asNeeded", "schedule")
MAX_RECORDED = 200  # dose times kept per order: a q4h course of a month; older ones drop out
REVIEW_FIELDS = ("orderId", "placedBy", "kind", "description", "resultedAt", "resultedByName",
                 "abnormal", "high", "low", "abnormalValues")
PLACED_STATUS = OrderStatus.CREATED.value  # when the placing event does not say
# What a handover note's row shows ("My patients": an open note and who wrote it).
HANDOVER_FIELDS = ("handoverId", "shift", "writtenByName")
DOSE_RECORDED = frozenset({EventType.MEDICATION_ADMINISTERED, EventType.MEDICATION_NOT_GIVEN})


class NeedsSource(Exception):
    """The event cannot be folded safely; rebuild the state from the source record."""


def _pick(data: dict[str, Any], names: Iterable[str], required: Iterable[str]) -> dict[str, Any]:
    missing = [n for n in required if data.get(n) in (None, "")]
    if missing:
        raise NeedsSource(f"event data lacks {', '.join(missing)}")
    return {n: data.get(n) for n in names}


def _order_of(state: PatientState, data: dict[str, Any]) -> dict[str, Any]:
    order = state.orders.get(data.get("orderId", ""))
    if order is None:
        raise NeedsSource("event refers to an order this state does not hold")
    return order


def _with_order(state: PatientState, order: dict[str, Any]) -> PatientState:
    orders = dict(state.orders)
    if order.get("status") in ACTIVE:
        orders[order["orderId"]] = order
    else:
        orders.pop(order["orderId"], None)  # views show active orders only
    return replace(state, orders=orders)


def _placed(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    order = _pick({"kind": kind, "status": PLACED_STATUS, **data},
                  ORDER_FIELDS, ("orderId", "urgency", "description", "placedAt"))
    if kind == "medication":
        if not data.get("asNeeded") and data.get("frequencyHours") is None:
            raise NeedsSource("a scheduled medication without its frequency in hours")
        order.update({n: data.get(n) for n in MEDICATION_FIELDS})
        order["recorded"] = []
    return order


def _dose_recorded(state: PatientState, data: dict[str, Any]) -> PatientState:
    order = _order_of(state, data)
    slot = data.get("scheduledFor")
    if not slot or order.get("kind") != "medication":
        return state  # an as-needed dose answers no dose time
    recorded = sorted({*order.get("recorded", ()), slot})[-MAX_RECORDED:]
    return _with_order(state, {**order, "recorded": recorded})


def _review(data: Mapping[str, Any]) -> dict[str, Any]:
    results, flags = data.get("results") or {}, data.get("flags") or {}
    review = {"orderId": data.get("orderId"), "placedBy": data.get("placedBy") or "",
              "kind": data.get("kind"), "description": data.get("description") or "",
              "resultedAt": results.get("resultedAt"),
              "resultedByName": results.get("resultedByName") or results.get("resultedBy"),
              "abnormal": bool(flags.get("abnormal")), "high": list(flags.get("high") or ()),
              "low": list(flags.get("low") or ()),
              # in words from the values the event carries ("Sodium 128 mmol/L, low"): the
              # row needs no reference data to name an analyte
              "abnormalValues": abnormal_in_words(results.get("values") or ()),
              # preliminary, final or corrected (a laboratory's; the results form's: final)
              "resultStatus": results.get("status") or "final"}
    if not review["orderId"] or not review["resultedAt"]:
        raise NeedsSource("results without their order or time")
    return review


def _allergy(state: PatientState, etype: str, data: dict[str, Any]) -> PatientState:
    """The allergy flag's inputs, as ``Patient.add_allergy`` / ``remove_allergy`` /
    ``record_no_known_allergies`` change them."""
    allergy_id = data.get("allergyId")
    if etype == EventType.NO_KNOWN_ALLERGIES_RECORDED:
        return replace(state, no_known_allergies=True)
    if not allergy_id:
        raise NeedsSource("an allergy event without its allergy id")
    ids = set(state.allergy_ids) - {allergy_id}
    if etype == EventType.ALLERGY_ADDED:
        if (data.get("status") or "active") == "active":
            ids.add(allergy_id)
        return replace(state, allergy_ids=tuple(sorted(ids)), no_known_allergies=False)
    return replace(state, allergy_ids=tuple(sorted(ids)))


def _handover(state: PatientState, etype: str, data: dict[str, Any]) -> PatientState:
    """Open handover notes: written (or rewritten) opens one, acknowledged closes it."""
    handover_id = data.get("handoverId")
    if not handover_id or not data.get("shift"):
        raise NeedsSource("a handover event without its id or shift")
    notes = {k: v for k, v in state.handovers.items() if k != handover_id}
    if etype == EventType.HANDOVER_WRITTEN and not data.get("acknowledgedAt"):
        notes[handover_id] = {n: data.get(n) for n in HANDOVER_FIELDS}
    return replace(state, handovers=notes)


ALLERGY_EVENTS = frozenset({EventType.ALLERGY_ADDED, EventType.ALLERGY_REMOVED,
                            EventType.NO_KNOWN_ALLERGIES_RECORDED})
HANDOVER_EVENTS = frozenset({EventType.HANDOVER_WRITTEN, EventType.HANDOVER_ACKNOWLEDGED})


def _observed(state: PatientState, etype: str, data: dict[str, Any]) -> PatientState:
    """The observations' summary, as the record's own commands move it."""
    summary = state.observations
    if etype == EventType.OBSERVATIONS_RECORDED:
        if not data.get("observationId") or not data.get("takenAt"):
            raise NeedsSource("an observation set without its id or time")
        summary = observed.follow_set(summary, data)
    elif etype == EventType.OBSERVATIONS_ESCALATED:
        summary = observed.follow_escalation(summary, data)
    elif etype == EventType.SPO2_SCALE2_DECIDED:
        summary = observed.follow_scale(summary, data)
    else:
        summary = observed.follow_scale(summary, None)
    return replace(state, observations=summary)


OBSERVATION_EVENTS = frozenset({EventType.OBSERVATIONS_RECORDED,
                                EventType.OBSERVATIONS_ESCALATED,
                                EventType.SPO2_SCALE2_DECIDED, EventType.SPO2_SCALE2_ENDED})


def _apply(state: PatientState, etype: str, data: dict[str, Any]) -> PatientState:
    if etype in OBSERVATION_EVENTS:
        return _observed(state, etype, data)
    if etype in ALLERGY_EVENTS:
        return _allergy(state, etype, data)
    if etype in HANDOVER_EVENTS:
        return _handover(state, etype, data)
    if etype in DOSE_RECORDED:
        return _dose_recorded(state, data)
    if etype == EventType.RESULTS_RECORDED:
        return replace(state, reviews={**state.reviews, data.get("orderId", ""): _review(data)})
    if etype == EventType.RESULT_ACKNOWLEDGED:
        return replace(state, reviews={k: v for k, v in state.reviews.items()
                                       if k != data.get("orderId")})
    if etype == EventType.PATIENT_REGISTERED:
        return replace(state, patient=_pick(data, PATIENT_FIELDS, PATIENT_FIELDS[:4]))
    if etype == EventType.DEMOGRAPHICS_UPDATED:
        if state.patient is None:
            raise NeedsSource("demographics of an unknown patient")
        changes = {k: data[k] for k in PATIENT_FIELDS if k in data}
        return replace(state, patient={**state.patient, **changes})
    if etype == EventType.ADMISSION_STARTED:
        adm = _pick(data, ADMISSION_FIELDS, ("admissionId", "departmentId", "wardId",
                                             "startedAt"))
        return replace(state, admission=adm)
    if etype == EventType.PATIENT_TRANSFERRED:
        adm = state.admission
        if adm is None or data.get("admissionId", adm["admissionId"]) != adm["admissionId"]:
            raise NeedsSource("transfer of an admission this state does not hold")
        ward = data.get("toWard", data.get("wardId"))
        if not ward:
            raise NeedsSource("transfer without a target ward")
        moved = {**adm, "wardId": ward, "bed": data.get("toBed", data.get("bed")),
                 "departmentId": data.get("toDepartment",
                                          data.get("departmentId", adm["departmentId"]))}
        return replace(state, admission=moved)
    if etype == EventType.ADMISSION_ENDED:
        adm = state.admission
        if adm is None or data.get("admissionId", adm["admissionId"]) != adm["admissionId"]:
            raise NeedsSource("end of an admission this state does not hold")
        # Ending an admission ends its orders; the views never show orders without one.
        orders = {k: o for k, o in state.orders.items()
                  if o.get("admissionId") not in (None, adm["admissionId"])}
        return replace(state, admission=None, orders=orders)
    if etype in ORDER_KIND_BY_EVENT:
        return _with_order(state, _placed(ORDER_KIND_BY_EVENT[etype], data))
    if etype in ORDER_STATUS_AFTER:
        return _with_order(state, {**_order_of(state, data), "status": ORDER_STATUS_AFTER[etype]})
    if etype == EventType.ORDER_ASSIGNED:
        if not data.get("assigneeId"):
            raise NeedsSource("assignment without an assignee")
        return _with_order(state, {**_order_of(state, data), "assigneeId": data["assigneeId"],
                                   "assigneeName": data.get("assigneeName", "")})
    if etype == EventType.ORDER_REPAIRED:
        name = data.get("field")
        if name not in REPAIRABLE_ORDER_FIELDS:
            raise NeedsSource(f"repair of a field the fold does not keep: {name}")
        order = _order_of(state, data)
        if name not in order:
            return state  # a field this order's rows do not show (not a medication)
        return _with_order(state, {**order, name: data.get("value")})
    if etype in MERGE_EVENTS:
        # a merge moves stays, orders and allergies between two records: the source decides
        raise NeedsSource("a merge step: the record is read again")
    if etype == EventType.ORDER_UNASSIGNED:
        return _with_order(state, {**_order_of(state, data), "assigneeId": None,
                                   "assigneeName": None})
    raise NeedsSource(f"no fold rule for {etype}")  # unknown: the source record decides


def fold(state: PatientState, event: dict[str, Any]) -> PatientState:
    """Apply the event contents ``event`` (seq must be ``state.seq + 1``)."""
    if int(event["seq"]) != state.seq + 1:
        raise ValueError(f"event {event['seq']} does not follow {state.seq}")
    data = dict(event.get("data") or {})
    folded = _apply(state, event["type"], data)
    if event["type"] in census.STAY_EVENTS:
        try:
            folded = replace(folded, stays=census.follow(state.stays, event["type"], data))
        except census.StaysUnclear as exc:
            raise NeedsSource(str(exc)) from None
    return replace(folded, seq=state.seq + 1)


def _patient(p: Patient) -> dict[str, Any]:
    return {"mrn": p.mrn, "givenName": p.given_name, "familyName": p.family_name,
            "birthDate": p.birth_date.isoformat(), "sex": p.sex}


def _admission(a: Admission) -> dict[str, Any]:
    return {"admissionId": a.admission_id, "departmentId": a.department_id,
            "wardId": a.ward_id, "bed": a.bed, "attendingId": a.attending_id,
            "attendingName": a.attending_name, "startedAt": a.started_at}


def _order(o: Order, frequency_hours: Mapping[str, float]) -> dict[str, Any]:
    order = {"orderId": o.order_id, "admissionId": o.admission_id, "kind": o.kind,
             "status": o.status, "urgency": o.urgency, "description": o.description,
             "departmentId": o.department_id, "wardId": o.ward_id,
             "assigneeId": o.assignee_id, "assigneeName": o.assignee_name,
             "placedAt": o.placed_at}
    if o.kind == "medication":
        d = o.details
        order.update({n: d.get(n) for n in MEDICATION_FIELDS})
        if order["frequencyHours"] is None and not d.get("asNeeded"):
            order["frequencyHours"] = frequency_hours.get(d.get("frequency") or "")
        order["recorded"] = sorted({slot for e in o.administrations
                                    if (slot := e.get("scheduledFor"))})[-MAX_RECORDED:]
    return order


def _pending_review(o: Order) -> dict[str, Any] | None:
    results = o.details.get("results")
    if o.kind not in RESULT_KINDS or not results or results.get("acknowledgedAt"):
        return None
    return _review({"orderId": o.order_id, "placedBy": o.placed_by, "kind": o.kind,
                    "description": o.description, "results": results,
                    "flags": flags_summary(results.get("values") or ())})


def from_source(patient_id: str, seq: int, patient: Patient | None,
                admissions: Iterable[Admission], orders: Iterable[Order],
                frequency_hours: Mapping[str, float] | None = None,
                handovers: Iterable[Mapping[str, Any]] = (),
                observations: Mapping[str, Any] | None = None) -> PatientState:
    """The state as of ``seq`` from the record: the patient (and their allergy flag's
    inputs), the active admission, the active orders of that admission (or of none),
    results not yet acknowledged, handover notes not yet acknowledged, and the
    observations' summary as the record keeps it.
    ``frequency_hours``: hours per frequency code, for medication orders placed before
    orders carried their own. A record merged into another has no rows: its stays, orders
    and allergies are the survivor's."""
    if patient is not None and (patient.merged_into or {}).get("state") == LockState.MERGED:
        return PatientState(patient_id, seq=seq)
    person = None if patient is None else _patient(patient)
    if person is not None and not all(person[k] for k in PATIENT_FIELDS[:4]):
        raise ValueError("patient document lacks a required field")
    admissions = list(admissions)
    admission = None
    for adm in admissions:
        if adm.status == AdmissionStatus.ACTIVE:
            admission = _admission(adm)
    held = (None,) if admission is None else (None, admission["admissionId"])
    orders = list(orders)
    active = {o.order_id: _order(o, frequency_hours or {}) for o in orders
              if o.status in ACTIVE and o.admission_id in held}
    reviews = {o.order_id: review for o in orders if (review := _pending_review(o))}
    notes = {str(h["handoverId"]): {n: h.get(n) for n in HANDOVER_FIELDS} for h in handovers
             if h.get("handoverId") and not h.get("acknowledgedAt")}
    allergy_ids = () if patient is None else tuple(sorted(
        str(a["allergyId"]) for a in active_allergies(patient.allergies)))
    return PatientState(patient_id, seq=seq, patient=person, admission=admission,
                        orders=active, reviews=reviews, stays=census.stays_of(admissions),
                        allergy_ids=allergy_ids,
                        no_known_allergies=bool(patient and patient.no_known_allergies),
                        handovers=notes,
                        observations=None if observations is None else dict(observations))


Outcome = str  # "applied" | "duplicate" | "rebuilt"


def step(state: PatientState, event: dict[str, Any],
         source: Callable[[], PatientState]) -> tuple[PatientState, Outcome]:
    """The version guard: apply the next event, ignore old ones, rebuild on a gap."""
    seq = int(event["seq"])
    if seq <= state.seq:
        return state, "duplicate"
    if seq == state.seq + 1 and state.shape == SHAPE:
        try:
            return fold(state, event), "applied"
        except NeedsSource:
            pass
    rebuilt = source()
    if rebuilt.seq <= state.seq:
        return state, "duplicate"  # the source is not newer than what we hold
    return rebuilt, "rebuilt"


def diff(old: dict[RowKey, Row], new: dict[RowKey, Row]) -> tuple[list[Row], list[RowKey]]:
    """Rows to write (new or changed) and keys to delete to go from ``old`` to ``new``."""
    writes = [row for key, row in new.items() if old.get(key) != row]
    deletes = [key for key in old if key not in new]
    return writes, deletes
