"""The events' one public form, their published schemas and docs/events.md."""

from __future__ import annotations

from pathlib import Path

import jsonschema_rs
import pytest

from cosmos_backend.envelope import wrap
from cosmos_backend.uow import UnitOfWork
from patients import events_check, events_doc
from patients.domain.events import EventType
from patients.events_public import DATA_MODELS, json_schema, public_event

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
STORED = {"eventId": "e-1", "stream": "P_p1", "seq": 3, "type": "OrderCancelled",
          "occurredAt": "2026-11-25T14:00:00+00:00",
          "actor": {"id": 7, "username": "nurse", "display_name": "Nurse Jones",
                    "roles": ["nurse"]},
          "correlationId": None,
          "data": {"orderId": "o1", "status": "cancelled", "cancelReason": "duplicate"}}


def _event_doc(data: dict, event_type: str = "OrderCancelled") -> dict:
    return wrap(doc_id="evt-0000000003", pk="P_p1", doc_type="Event", sub_type=event_type,
                contents={**STORED, "type": event_type, "data": data})


def test_it_makes_the_public_form_of_a_stored_event() -> None:
    assert public_event(STORED, patient_id="p1") == {
        "event_id": "e-1", "type": "OrderCancelled", "schema_version": 1, "patient_id": "p1",
        "seq": 3, "occurred_at": "2026-11-25T14:00:00+00:00",
        "actor": {"id": "7", "username": "nurse", "display_name": "Nurse Jones"},
        "data": {"order_id": "o1", "status": "cancelled", "cancel_reason": "duplicate"}}


@pytest.mark.parametrize("event_type", [str(t) for t in EventType])
def test_every_event_type_has_a_schema_its_example_meets(event_type: str) -> None:
    assert event_type in DATA_MODELS
    example = events_doc.example(event_type)
    errors = [e.message for e in
              jsonschema_rs.validator_for(json_schema(event_type)).iter_errors(example)]
    assert errors == []


def test_the_check_names_an_event_off_its_schema() -> None:
    assert events_check.problems(_event_doc(STORED["data"])) == []
    wrong = events_check.problems(_event_doc({"orderId": "o1", "statusCode": "cancelled"}))
    assert len(wrong) == 2 and all(w.startswith("OrderCancelled #3 of P_p1") for w in wrong)
    assert events_check.problems(_event_doc({}, "SomethingNew")) == [
        "SomethingNew: no schema (add its data model to patients.events_public)"]


def test_every_event_the_suite_makes_is_checked() -> None:
    assert getattr(UnitOfWork.add, "checks_events", False)


def test_the_committed_doc_is_the_generated_one() -> None:
    assert DOC.read_text() == events_doc.render(), (
        "regenerate it: python -m patients.events_doc > docs/events.md")
