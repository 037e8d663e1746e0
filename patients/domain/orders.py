"""Orders on an admission: kinds, urgency, the state machine, assignment, administrations."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from typing import Any

from patients.domain.errors import InvalidInput, InvalidTransition
from patients.domain.events import EventType


class OrderStatus(StrEnum):
    CREATED = "created"
    READY = "ready"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class Urgency(StrEnum):
    ROUTINE = "routine"
    STAT = "stat"


# Order kind → the document subtype it is stored as.
KINDS = {"medication": "MedicationPrescription", "imaging": "ImagingExam", "lab": "LabTest"}
KIND_LABELS = {"medication": "Medication", "imaging": "Imaging", "lab": "Lab test"}
URGENCIES = tuple(Urgency)
URGENCY_LABELS = {Urgency.ROUTINE: "Routine", Urgency.STAT: "STAT"}
ACTIVE = (OrderStatus.CREATED, OrderStatus.READY, OrderStatus.IN_PROGRESS)
STATUS_LABELS = {OrderStatus.CREATED: "Created", OrderStatus.READY: "Ready",
                 OrderStatus.IN_PROGRESS: "In progress", OrderStatus.COMPLETED: "Completed",
                 OrderStatus.CANCELLED: "Cancelled"}
# Action → (states it is allowed from, new state, event).
TRANSITIONS: dict[str, tuple[tuple[OrderStatus, ...], OrderStatus, EventType]] = {
    "ready": ((OrderStatus.CREATED,), OrderStatus.READY, EventType.ORDER_READY),
    "start": ((OrderStatus.CREATED, OrderStatus.READY), OrderStatus.IN_PROGRESS,
              EventType.ORDER_STARTED),
    "complete": ((OrderStatus.IN_PROGRESS,), OrderStatus.COMPLETED, EventType.ORDER_COMPLETED),
    "cancel": (ACTIVE, OrderStatus.CANCELLED, EventType.ORDER_CANCELLED),
}
# The status each progress event leaves an order in (what a projection folds).
ORDER_STATUS_AFTER: dict[EventType, OrderStatus] = {
    event: target for _, target, event in TRANSITIONS.values()}
# A signed prescription is the authority to give it: a dose may be recorded on a new
# ("created") order as on a ready one, as on a drug chart; the first dose given starts it.
ADMINISTRABLE = (OrderStatus.CREATED, OrderStatus.READY, OrderStatus.IN_PROGRESS)
ENDED = (OrderStatus.COMPLETED, OrderStatus.CANCELLED)  # an order's course ends (endedAt)


def actions_from(status: str) -> list[str]:
    """The progress actions an order in ``status`` allows (ready, start, complete, cancel)."""
    return [action for action, (allowed, _, _) in TRANSITIONS.items() if status in allowed]


# An order's course is bounded by plausible years; anything else is a typo or garbage that
# would break the dose schedule of every reader of the order.
EARLIEST_YEAR, LATEST_YEAR = 1900, 2100
MAX_TIME_TEXT = 40


def course_time(value: datetime | str | None, tz: tzinfo, *, field: str) -> datetime | None:
    """An order's start or end as an aware instant, None when not given. Text must be ISO
    8601 (read in ``tz`` without an offset), the year 1900–2100; else InvalidInput on
    ``field``. The edge checks the same; this keeps every caller of the use case honest."""
    if value is None or value == "":
        return None
    moment: datetime | None = value if isinstance(value, datetime) else None
    if isinstance(value, str) and len(value) <= MAX_TIME_TEXT:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
    if moment is None:
        raise InvalidInput("Give the time as an ISO 8601 date and time, such as "
                           "2026-03-01T08:00:00+01:00.", field=field)
    if not EARLIEST_YEAR <= moment.year <= LATEST_YEAR:
        raise InvalidInput(f"Give a year from {EARLIEST_YEAR} to {LATEST_YEAR}.", field=field)
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def course(start: datetime | str | None, end: datetime | str | None, tz: tzinfo
           ) -> dict[str, str | None]:
    """``startAt`` / ``endAt`` as kept (ISO 8601 in UTC, like ``placedAt``; None when not
    given). An end before the start is refused (InvalidInput on ``end_at``)."""
    start_at = course_time(start, tz, field="start_at")
    end_at = course_time(end, tz, field="end_at")
    if start_at is not None and end_at is not None and end_at < start_at:
        raise InvalidInput("The end must be after the start.", field="end_at")
    return {"startAt": start_at and start_at.astimezone(UTC).isoformat(),
            "endAt": end_at and end_at.astimezone(UTC).isoformat()}


# The fields every order has; the rest of its record are its kind's ``details``.
CORE_FIELDS = ("orderId", "patientId", "admissionId", "kind", "status", "urgency",
               "description", "departmentId", "wardId", "assigneeId", "assigneeName",
               "placedAt", "placedBy", "cancelReason", "administrations", "version")


@dataclass
class Order:
    order_id: str
    patient_id: str
    admission_id: str
    kind: str
    urgency: str
    description: str
    department_id: str
    ward_id: str
    placed_at: str
    placed_by: str
    details: dict[str, Any]
    status: str = OrderStatus.CREATED
    assignee_id: str | None = None
    assignee_name: str | None = None
    cancel_reason: str | None = None
    administrations: list[dict[str, Any]] = field(default_factory=list)
    version: int = 1

    @classmethod
    def place(cls, *, kind: str, urgency: str, **values: Any) -> Order:
        if kind not in KINDS:
            raise InvalidInput(f"Order kind must be one of {', '.join(KINDS)}.", field="kind")
        if urgency not in URGENCIES:
            raise InvalidInput("Urgency must be routine or stat.", field="urgency")
        return cls(kind=kind, urgency=urgency, **values)

    @classmethod
    def from_record(cls, c: dict[str, Any]) -> Order:
        """The order from :meth:`as_record`'s shape (the stored and the event shape)."""
        return cls(
            order_id=c["orderId"], patient_id=c["patientId"], admission_id=c["admissionId"],
            kind=c["kind"], urgency=c["urgency"], description=c["description"],
            department_id=c["departmentId"], ward_id=c.get("wardId") or "",
            placed_at=c["placedAt"], placed_by=c.get("placedBy", ""),
            details={k: v for k, v in c.items() if k not in CORE_FIELDS},
            status=c["status"], assignee_id=c.get("assigneeId"),
            assignee_name=c.get("assigneeName"), cancel_reason=c.get("cancelReason"),
            administrations=list(c.get("administrations", [])), version=c.get("version", 1))

    def as_record(self) -> dict[str, Any]:
        """The whole order, camelCase: what is stored and what its placing event carries."""
        return {
            "orderId": self.order_id, "patientId": self.patient_id,
            "admissionId": self.admission_id, "kind": self.kind, "status": str(self.status),
            "urgency": str(self.urgency), "description": self.description,
            "departmentId": self.department_id, "wardId": self.ward_id,
            "assigneeId": self.assignee_id, "assigneeName": self.assignee_name,
            "placedAt": self.placed_at, "placedBy": self.placed_by,
            "cancelReason": self.cancel_reason, "administrations": self.administrations,
            "version": self.version, **self.details,
        }

    @property
    def ended_at(self) -> str | None:
        """When a completed or cancelled order ended (None while active, and for orders
        ended before this was kept)."""
        return self.details.get("endedAt")

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def transition(self, action: str, *, reason: str = "", at: datetime | None = None
                   ) -> EventType:
        """Move the order; returns the event type. Cancelling needs a reason. Completing or
        cancelling ends the course: ``endedAt`` (``at``, default now) bounds its dose times."""
        if action not in TRANSITIONS:
            raise InvalidInput(f"Unknown action {action!r}.", field="action")
        allowed, target, event = TRANSITIONS[action]
        if self.status not in allowed:
            raise InvalidTransition(
                f"A {self.status.replace('_', ' ')} order cannot be {target.replace('_', ' ')}; "
                "reload the chart to see its current state.")
        if action == "cancel":
            reason = " ".join(reason.split())
            if not reason:
                raise InvalidInput("Give a reason for cancelling.", field="reason")
            self.cancel_reason = reason
        if target in ENDED:
            self.details["endedAt"] = (at or datetime.now(UTC)).astimezone(UTC).isoformat()
        self.status = target
        self.version += 1
        return event

    def assign(self, user_id: str | None, user_name: str | None) -> EventType:
        if not self.active:
            raise InvalidTransition("Only active orders can be assigned.")
        self.assignee_id, self.assignee_name = user_id, user_name
        self.version += 1
        return EventType.ORDER_ASSIGNED if user_id else EventType.ORDER_UNASSIGNED

    def check_administrable(self) -> None:
        """InvalidTransition unless a dose may be recorded on this order now."""
        if self.kind != "medication":
            raise InvalidTransition("Only medication orders have administrations.")
        if self.status not in ADMINISTRABLE:
            raise InvalidTransition(
                f"This prescription is {STATUS_LABELS.get(self.status, self.status).lower()}: no dose can be "
                "recorded on it.")

    def administer(self, record: dict[str, Any]) -> bool:
        """Record a dose given or not given (``record["status"]``, given when absent);
        returns True when a dose given started the order."""
        self.check_administrable()
        given = record.get("status", "given") == "given"
        if given and record["dose"] <= 0:
            raise InvalidInput("The dose must be positive.", field="dose")
        self.administrations.append(record)
        started = given and self.status in (OrderStatus.CREATED, OrderStatus.READY)
        if started:
            self.status = OrderStatus.IN_PROGRESS
        self.version += 1
        return started
