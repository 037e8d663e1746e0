"""Results: completing a lab or imaging order with its results, and acknowledging them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain import results as rules
from patients.domain.errors import InvalidInput, InvalidTransition
from patients.domain.events import (
    Event,
    OrderProgressed,
    ResultAcknowledged,
    ResultsRecorded,
)
from patients.domain.orders import Order, OrderStatus
from patients.persistence import reference
from patients.persistence.repository import PatientRecord, PatientRecords


@dataclass(frozen=True)
class CompleteOrder:
    """Complete an order: a lab order with a value for each analyte of its test, an imaging
    order with its report; a medication order with neither."""

    patient_id: str
    order_id: str
    results: tuple[rules.GivenValue, ...] = ()
    report: str = ""
    expected_version: str | None = None  # of the order


@dataclass(frozen=True)
class AcknowledgeResult:
    patient_id: str
    order_id: str
    expected_version: str | None = None  # of the order


def _load(cmd: CompleteOrder | AcknowledgeResult, uow: UnitOfWork
          ) -> tuple[PatientRecords, PatientRecord, Order]:
    records = PatientRecords(uow)
    record, order = records.load_order(cmd.patient_id, cmd.order_id, cmd.expected_version)
    return records, record, order


def _lab_values(order: Order, given: tuple[rules.GivenValue, ...], store: DocumentStore
                ) -> list[dict[str, Any]]:
    test = reference.get(store, "LabTest", order.details.get("testCode", ""), field="test_code")
    return rules.lab_values(test.get("analytes", []), given, reference.all_of(store, "Unit"))


def recorded_results(order: Order, cmd: CompleteOrder, store: DocumentStore, *, actor: Actor,
                     now: datetime) -> dict[str, Any] | None:
    """The results ``cmd`` gives for ``order`` as kept on it (None for a medication order);
    InvalidInput (422) when they do not fit the order's kind."""
    if order.kind not in rules.RESULT_KINDS:
        if cmd.results or cmd.report.strip():
            raise InvalidInput("Only lab and imaging orders have results.", field="results")
        return None
    if order.kind == "lab":
        values = _lab_values(order, cmd.results, store)
        report = rules.imaging_report(cmd.report) if cmd.report.strip() else ""
    else:
        if cmd.results:
            raise InvalidInput("An imaging exam is reported in text, not values.",
                               field="results")
        values, report = [], rules.imaging_report(cmd.report)
    return {"values": values, "report": report, "resultedAt": now.isoformat(),
            "resultedBy": actor.username, "resultedByName": actor.display_name or actor.username}


def complete_order(cmd: CompleteOrder, uow: UnitOfWork, *, actor: Actor) -> Order:
    """Complete the order; a lab or imaging order keeps its results and the batch carries
    ``ResultsRecorded`` with ``OrderCompleted``."""
    now = datetime.now(UTC)
    records, record, order = _load(cmd, uow)
    progress = order.transition("complete")  # the state first: a completed order is a 409
    results = recorded_results(order, cmd, uow.store, actor=actor, now=now)
    events: list[Event] = [OrderProgressed(progress=progress, order_id=order.order_id,
                                           status=order.status, ended_at=order.ended_at)]
    if results is not None:
        order.details["results"] = results
        events.append(ResultsRecorded(
            order_id=order.order_id, placed_by=order.placed_by, kind=order.kind,
            description=order.description, flags=rules.flags_summary(results["values"]),
            results=results))
    records.save(record, events, actor=actor, now=now)
    return order


def acknowledge_result(cmd: AcknowledgeResult, uow: UnitOfWork, *, actor: Actor) -> Order:
    """Mark a completed order's results reviewed; once only (409 the second time)."""
    now = datetime.now(UTC)
    records, record, order = _load(cmd, uow)
    results = order.details.get("results")
    if order.status != OrderStatus.COMPLETED or not results:
        raise InvalidTransition("This order has no results to acknowledge.")
    if results.get("acknowledgedAt"):
        raise InvalidTransition(
            f"These results were acknowledged by {results.get('acknowledgedBy')} at "
            f"{results['acknowledgedAt']}.")
    order.details["results"] = {**results, "acknowledgedAt": now.isoformat(),
                                "acknowledgedBy": actor.username}
    order.version += 1
    records.save(record, [ResultAcknowledged(
        order_id=order.order_id, placed_by=order.placed_by, acknowledged_at=now.isoformat(),
        acknowledged_by=actor.username)], actor=actor, now=now)
    return order


@dataclass(frozen=True)
class RecordLabResults:
    """A laboratory's results for a lab order, as it sends them: ``status`` preliminary
    (recorded, the order still in progress), final (the order completed) or corrected; a
    final or corrected result for a completed order amends it. ``observed_at``: when the
    specimen was observed (OBR-7); ``comments``: the laboratory's on the whole result."""

    patient_id: str
    order_id: str
    results: tuple[rules.GivenValue, ...]
    status: str = rules.FINAL
    observed_at: str = ""
    comments: tuple[str, ...] = ()
    expected_version: str | None = None  # of the order


def _same(earlier: dict[str, Any] | None, values: list[dict[str, Any]], status: str) -> bool:
    """Whether ``earlier`` already says this (a resend: nothing new to record)."""
    if not earlier:
        return False
    kept = earlier.get("status") or rules.FINAL
    final_like = {rules.FINAL, rules.CORRECTED}
    return earlier.get("values") == values and (
        kept == status or (kept in final_like and status in final_like))


def record_lab_results(cmd: RecordLabResults, uow: UnitOfWork, *, actor: Actor) -> Order:
    """Record a laboratory's results on a lab order (the HL7 listener's use case).

    - preliminary, order in progress: kept on the order as preliminary (not final: the
      order stays in progress); Results to review shows them as preliminary;
    - final, order in progress: the order completes with them (a preliminary before them
      goes to the history);
    - final or corrected, order completed: a correction; the results before go to the
      history, the acknowledgement is cleared, so the clinician is told again;
    - the same results again: nothing recorded (a resend).

    InvalidTransition for a preliminary after the final, or an order neither in progress
    nor completed; InvalidInput as the results form's for values that do not fit."""
    if cmd.status not in rules.RESULT_STATUSES:
        raise InvalidInput(f"Unknown result status {cmd.status!r}.", field="status")
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record, order = records.load_order(cmd.patient_id, cmd.order_id, cmd.expected_version)
    if order.kind != "lab":
        raise InvalidInput("Only a lab order takes a laboratory's results.", field="order_id")
    test = reference.get(uow.store, "LabTest", order.details.get("testCode", ""),
                         field="test_code")
    values = rules.lab_values(test.get("analytes", []), cmd.results,
                              reference.all_of(uow.store, "Unit"),
                              partial=cmd.status == rules.PRELIMINARY)
    earlier = order.details.get("results")
    if _same(earlier, values, cmd.status):
        return order
    completed = order.status == OrderStatus.COMPLETED
    if completed and cmd.status == rules.PRELIMINARY:
        raise InvalidTransition("The order has final results: a preliminary result after "
                                "them is not recorded (send a correction).")
    status = rules.CORRECTED if completed else cmd.status
    if status == rules.CORRECTED and not completed:
        status = rules.FINAL  # a correction of a preliminary is the final result
    history = list((earlier or {}).get("history") or [])
    if earlier:
        history.append({k: v for k, v in earlier.items() if k != "history"})
    results: dict[str, Any] = {
        "values": values, "report": "", "status": status, "resultedAt": now.isoformat(),
        "resultedBy": actor.username, "resultedByName": actor.display_name or actor.username}
    if cmd.observed_at:
        results["observedAt"] = cmd.observed_at
    if cmd.comments:
        results["comments"] = list(cmd.comments)
    if history:
        results["history"] = history
    events: list[Event] = []
    if status == rules.FINAL:
        progress = order.transition("complete")
        events.append(OrderProgressed(progress=progress, order_id=order.order_id,
                                      status=order.status, ended_at=order.ended_at))
    else:
        if order.status != OrderStatus.IN_PROGRESS and not completed:
            raise InvalidTransition("Results are recorded on an order in progress (started) "
                                    "or completed.")
        order.version += 1
    order.details["results"] = results
    events.append(ResultsRecorded(
        order_id=order.order_id, placed_by=order.placed_by, kind=order.kind,
        description=order.description, flags=rules.flags_summary(values), results=results))
    records.save(record, events, actor=actor, now=now)
    return order
