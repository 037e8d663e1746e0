"""Projection rules, pure: events fold into a per-patient state; the state yields view rows.

Two ways to the same state: :func:`fold` applies one event to the state of the previous
sequence number; :func:`from_source` builds it from the patient's partition (the source of
truth) when an event cannot be applied in sequence (a gap, an unknown event type, data the
fold cannot trust). :func:`step` is the version guard deciding between them; it is the whole
exactly-once-in-effect argument and is tested with shuffled, duplicated deliveries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from worklists.projection.rows import Row, rows_for

__all__ = ["PatientState", "NeedsSource", "fold", "from_source", "step", "diff", "rows_for",
           "Row", "ACTIVE_ORDER_STATUSES"]

ACTIVE_ORDER_STATUSES = ("created", "ready", "in_progress")
PATIENT_FIELDS = ("mrn", "givenName", "familyName", "birthDate", "sex")
ADMISSION_FIELDS = ("admissionId", "departmentId", "wardId", "bed", "attendingId",
                    "attendingName", "startedAt")
ORDER_FIELDS = ("orderId", "admissionId", "kind", "status", "urgency", "description",
                "departmentId", "wardId", "assigneeId", "assigneeName", "placedAt")
ORDER_KIND_BY_EVENT = {"MedicationPrescribed": "medication", "ImagingExamRequested": "imaging",
                       "LabTestRequested": "lab"}
ORDER_KIND_BY_SUBTYPE = {"MedicationPrescription": "medication", "ImagingExam": "imaging",
                         "LabTest": "lab"}
STATUS_BY_EVENT = {"OrderReady": "ready", "OrderStarted": "in_progress",
                   "OrderCompleted": "completed", "OrderCancelled": "cancelled"}
# Events that change nothing any view shows: applied by bumping the sequence only.
NO_VIEW_EFFECT = frozenset({"AllergyAdded", "AllergyRemoved", "MedicationAdministered"})


class NeedsSource(Exception):
    """The event cannot be folded safely; rebuild the state from the source record."""


@dataclass(frozen=True)
class PatientState:
    """What the views need of one patient as of stream sequence ``seq``."""

    patient_id: str
    seq: int = 0
    patient: dict[str, Any] | None = None
    admission: dict[str, Any] | None = None
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"patientId": self.patient_id, "seq": self.seq,
                "patient": self.patient, "admission": self.admission, "orders": self.orders}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PatientState:
        return cls(patient_id=data["patientId"], seq=int(data["seq"]), patient=data.get("patient"),
                   admission=data.get("admission"), orders=dict(data.get("orders") or {}))


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
    if order.get("status") in ACTIVE_ORDER_STATUSES:
        orders[order["orderId"]] = order
    else:
        orders.pop(order["orderId"], None)  # views show active orders only
    return replace(state, orders=orders)


def _apply(state: PatientState, etype: str, data: dict[str, Any]) -> PatientState:
    if etype in NO_VIEW_EFFECT:
        return state
    if etype == "PatientRegistered":
        return replace(state, patient=_pick(data, PATIENT_FIELDS, PATIENT_FIELDS[:4]))
    if etype == "PatientDemographicsUpdated":
        if state.patient is None:
            raise NeedsSource("demographics of an unknown patient")
        changes = {k: data[k] for k in PATIENT_FIELDS if k in data}
        return replace(state, patient={**state.patient, **changes})
    if etype == "AdmissionStarted":
        adm = _pick(data, ADMISSION_FIELDS, ("admissionId", "departmentId", "wardId",
                                             "startedAt"))
        return replace(state, admission=adm)
    if etype == "PatientTransferred":
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
    if etype == "AdmissionEnded":
        adm = state.admission
        if adm is None or data.get("admissionId", adm["admissionId"]) != adm["admissionId"]:
            raise NeedsSource("end of an admission this state does not hold")
        # Ending an admission ends its orders; the views never show orders without one.
        orders = {k: o for k, o in state.orders.items()
                  if o.get("admissionId") not in (None, adm["admissionId"])}
        return replace(state, admission=None, orders=orders)
    if etype in ORDER_KIND_BY_EVENT:
        order = _pick({"kind": ORDER_KIND_BY_EVENT[etype], "status": "created", **data},
                      ORDER_FIELDS, ("orderId", "urgency", "description", "placedAt"))
        return _with_order(state, order)
    if etype in STATUS_BY_EVENT:
        return _with_order(state, {**_order_of(state, data), "status": STATUS_BY_EVENT[etype]})
    if etype == "OrderAssigned":
        if not data.get("assigneeId"):
            raise NeedsSource("assignment without an assignee")
        return _with_order(state, {**_order_of(state, data), "assigneeId": data["assigneeId"],
                                   "assigneeName": data.get("assigneeName", "")})
    if etype == "OrderUnassigned":
        return _with_order(state, {**_order_of(state, data), "assigneeId": None,
                                   "assigneeName": None})
    raise NeedsSource(f"no fold rule for {etype}")  # unknown: the source record decides


def fold(state: PatientState, event: dict[str, Any]) -> PatientState:
    """Apply the event contents ``event`` (seq must be ``state.seq + 1``)."""
    if int(event["seq"]) != state.seq + 1:
        raise ValueError(f"event {event['seq']} does not follow {state.seq}")
    folded = _apply(state, event["type"], dict(event.get("data") or {}))
    return replace(folded, seq=state.seq + 1)


def from_source(patient_id: str, seq: int, docs: list[dict[str, Any]]) -> PatientState:
    """The state as of ``seq`` from the partition's documents (patient, admissions, orders)."""
    patient = admission = None
    orders: dict[str, dict[str, Any]] = {}
    for doc in docs:
        c = doc["docContents"]
        if doc["docType"] == "Patient":
            patient = {k: c.get(k) for k in PATIENT_FIELDS}
            if not all(patient[k] for k in PATIENT_FIELDS[:4]):
                raise ValueError("patient document lacks a required field")
        elif doc["docType"] == "Admission" and c.get("status") == "active":
            admission = {k: c.get(k) for k in ADMISSION_FIELDS}
        elif doc["docType"] == "Order" and c.get("status") in ACTIVE_ORDER_STATUSES:
            order = {k: c.get(k) for k in ORDER_FIELDS}
            order["kind"] = order["kind"] or ORDER_KIND_BY_SUBTYPE.get(doc.get("docSubType"))
            orders[c["orderId"]] = order
    if admission is None:
        orders = {k: o for k, o in orders.items() if o.get("admissionId") is None}
    else:
        orders = {k: o for k, o in orders.items()
                  if o.get("admissionId") in (None, admission["admissionId"])}
    return PatientState(patient_id, seq=seq, patient=patient,
                        admission=admission, orders=orders)


Outcome = str  # "applied" | "duplicate" | "rebuilt"


def step(state: PatientState, event: dict[str, Any],
         source: Callable[[], PatientState]) -> tuple[PatientState, Outcome]:
    """The version guard: apply the next event, ignore old ones, rebuild on a gap."""
    seq = int(event["seq"])
    if seq <= state.seq:
        return state, "duplicate"
    if seq == state.seq + 1:
        try:
            return fold(state, event), "applied"
        except NeedsSource:
            pass
    rebuilt = source()
    if rebuilt.seq <= state.seq:
        return state, "duplicate"  # the source is not newer than what we hold
    return rebuilt, "rebuilt"


def diff(old: dict[tuple[str, str, str], Row], new: dict[tuple[str, str, str], Row]
         ) -> tuple[list[Row], list[tuple[str, str, str]]]:
    """Rows to write (new or changed) and keys to delete to go from ``old`` to ``new``."""
    writes = [row for key, row in new.items() if old.get(key) != row]
    deletes = [key for key in old if key not in new]
    return writes, deletes
