"""Orders on an admission: kinds, urgency, the state machine, assignment, administrations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from patients.domain.errors import InvalidInput, InvalidTransition

__all__ = ["Order", "InvalidTransition", "KINDS", "PLACED_EVENT", "URGENCIES", "ACTIVE"]


KINDS = {"medication": "MedicationPrescription", "imaging": "ImagingExam", "lab": "LabTest"}
PLACED_EVENT = {"medication": "MedicationPrescribed", "imaging": "ImagingExamRequested",
                "lab": "LabTestRequested"}
URGENCIES = ("routine", "stat")
ACTIVE = ("created", "ready", "in_progress")
# Action → (states it is allowed from, new state, event).
TRANSITIONS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "ready": (("created",), "ready", "OrderReady"),
    "start": (("created", "ready"), "in_progress", "OrderStarted"),
    "complete": (("in_progress",), "completed", "OrderCompleted"),
    "cancel": (ACTIVE, "cancelled", "OrderCancelled"),
}


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
    status: str = "created"
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

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def transition(self, action: str, *, reason: str = "") -> str:
        """Move the order; returns the event type. Cancelling needs a reason."""
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
        self.status = target
        self.version += 1
        return event

    def assign(self, user_id: str | None, user_name: str | None) -> str:
        if not self.active:
            raise InvalidTransition("Only active orders can be assigned.")
        self.assignee_id, self.assignee_name = user_id, user_name
        self.version += 1
        return "OrderAssigned" if user_id else "OrderUnassigned"

    def administer(self, record: dict[str, Any]) -> None:
        if self.kind != "medication":
            raise InvalidTransition("Only medication orders have administrations.")
        if self.status not in ("ready", "in_progress"):
            raise InvalidTransition(
                "Administer only a ready or in-progress prescription (mark it ready first).")
        if record["dose"] <= 0:
            raise InvalidInput("The dose must be positive.", field="dose")
        self.administrations.append(record)
        if self.status == "ready":
            self.status = "in_progress"
        self.version += 1
