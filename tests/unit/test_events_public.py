"""The events' one public form, their published schemas and docs/events.md."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import jsonschema_rs
import pytest

from cosmos_backend.envelope import wrap
from cosmos_backend.uow import UnitOfWork
from patients import events_check, events_doc
from patients.domain import events as ev
from patients.domain.events import EventType
from patients.domain.orders import CORE_FIELDS
from patients.events_public import (
    DATA_MODELS,
    KEEP,
    PUBLIC,
    derive_fields,
    domain_events,
    json_schema,
    public_event,
    snake_key,
    undecided,
)

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


def test_every_domain_event_field_has_a_public_form_decision() -> None:
    assert undecided() == [], (
        "decide each field's public form in patients.events_public.PUBLIC")


def test_a_field_the_domain_gains_without_a_decision_is_named_and_not_published(
        monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class BedCleanedOnFloor(ev.BedCleaned):
        floor: str = ""

        def payload(self) -> dict:
            return {**super().payload(), "floor": self.floor}

    monkeypatch.setitem(PUBLIC, BedCleanedOnFloor, PUBLIC[ev.BedCleaned])
    assert undecided([BedCleanedOnFloor]) == ["BedCleanedOnFloor.floor"]
    fields, _ = derive_fields(BedCleanedOnFloor, PUBLIC[BedCleanedOnFloor])
    assert "floor" not in fields and set(fields) == set(DATA_MODELS["BedCleaned"].model_fields)
    monkeypatch.setitem(PUBLIC, BedCleanedOnFloor, {**PUBLIC[ev.BedCleaned], "colour": KEEP})
    assert "BedCleanedOnFloor.colour (no such field)" in undecided([BedCleanedOnFloor])


def test_every_event_type_is_stored_by_exactly_one_domain_class() -> None:
    made = [str(t) for cls in domain_events() for t in cls.stored_as]
    assert sorted(made) == sorted(str(t) for t in EventType)


def test_the_public_data_is_the_domain_event_field_by_field() -> None:
    registered = DATA_MODELS["PatientRegistered"].model_fields
    assert list(registered) == [f.name for f in fields(ev.PatientRegistered)]
    # a renamed field, and one the payload works out
    assert list(DATA_MODELS["ReferenceEntryChanged"].model_fields) == [
        "reference_type", "code", "entry", "previous", "changed"]
    # the type-choosing field is not data; the record carried whole is
    assert DATA_MODELS["OrderCancelled"].model_fields.keys() == {
        "order_id", "status", "cancel_reason", "ended_at"}
    assert DATA_MODELS["LabTestRequested"] is DATA_MODELS["MedicationPrescribed"]
    assert {snake_key(n) for n in CORE_FIELDS} == set(
        DATA_MODELS["MedicationPrescribed"].model_fields)


def test_the_apis_order_is_the_public_order_and_what_the_api_adds() -> None:
    from patients.api.schemas import OrderOut

    public = list(DATA_MODELS["MedicationPrescribed"].model_fields)
    assert list(OrderOut.model_fields)[:len(public)] == public
    assert OrderOut.__name__ == "OrderOut"
