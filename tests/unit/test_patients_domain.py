"""Domain rules of the clinical record, plain Python."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from patients.domain import Admission, Patient, fold
from patients.errors import InvalidInput, NotAdmitted, PatientAlreadyAdmitted
from patients.orders import InvalidTransition, Order

NOW = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)


def order(kind: str = "medication", status: str = "created") -> Order:
    o = Order.place(kind=kind, urgency="routine", order_id="o1", patient_id="p1",
                    admission_id="a1", description="x", department_id="MED", ward_id="MED-1",
                    placed_at=NOW.isoformat(), placed_by="1", details={})
    o.status = status
    return o


def test_it_folds_case_and_accents_for_search() -> None:
    assert fold("  Álvarez-Núñez ") == "ALVAREZ-NUNEZ"


@pytest.mark.parametrize(("field", "value"), [("given_name", " "), ("family_name", ""),
                                              ("mrn", "a b"), ("sex", "robot")])
def test_it_rejects_bad_registrations_on_the_field(field: str, value: str) -> None:
    values = {"given_name": "A", "family_name": "B", "mrn": "H1234", "sex": "female"}
    values[field] = value
    with pytest.raises(InvalidInput) as err:
        Patient.register(patient_id="p", birth_date=date(1990, 1, 1), today=NOW.date(),
                         now=NOW, **values)
    assert err.value.field == field


def test_it_computes_age_on_a_day() -> None:
    p = Patient("p", "H1", "A", "B", date(2000, 6, 15))
    assert (p.age_on(date(2026, 6, 14)), p.age_on(date(2026, 6, 15))) == (25, 26)


def test_it_allows_one_active_admission() -> None:
    first = Admission.start(admission_id="a", patient_id="p", department_id="D", ward_id="W",
                            bed=None, attending_id="1", attending_name="Dr", reason="r",
                            now=NOW, active=None)
    with pytest.raises(PatientAlreadyAdmitted):
        Admission.start(admission_id="b", patient_id="p", department_id="D", ward_id="W",
                        bed=None, attending_id="1", attending_name="Dr", reason="r", now=NOW,
                        active=first)
    first.end(disposition="home", now=NOW)
    with pytest.raises(NotAdmitted):
        first.end(disposition="home", now=NOW)


@pytest.mark.parametrize(("start", "action", "end"), [
    ("created", "ready", "ready"), ("created", "start", "in_progress"),
    ("ready", "start", "in_progress"), ("in_progress", "complete", "completed"),
    ("created", "cancel", "cancelled"), ("in_progress", "cancel", "cancelled"),
])
def test_it_moves_orders_along_their_states(start: str, action: str, end: str) -> None:
    o = order(status=start)
    o.transition(action, reason="because")
    assert o.status == end


@pytest.mark.parametrize(("start", "action"), [
    ("created", "complete"), ("completed", "cancel"), ("cancelled", "start"),
    ("ready", "ready"), ("completed", "start"),
])
def test_it_refuses_impossible_transitions(start: str, action: str) -> None:
    with pytest.raises(InvalidTransition):
        order(status=start).transition(action, reason="r")


def test_it_needs_a_reason_to_cancel_and_keeps_it() -> None:
    o = order()
    with pytest.raises(InvalidInput):
        o.transition("cancel", reason="  ")
    o.transition("cancel", reason="duplicate")
    assert o.cancel_reason == "duplicate"


def test_it_administers_only_ready_medication_and_starts_it() -> None:
    with pytest.raises(InvalidTransition):
        order(kind="lab", status="ready").administer({"dose": 1})
    with pytest.raises(InvalidTransition):
        order(status="created").administer({"dose": 1})
    o = order(status="ready")
    o.administer({"dose": 1})
    assert (o.status, len(o.administrations)) == ("in_progress", 1)


def test_it_assigns_only_active_orders() -> None:
    o = order()
    assert o.assign("7", "Nurse") == "OrderAssigned"
    assert o.assign(None, None) == "OrderUnassigned"
    with pytest.raises(InvalidTransition):
        order(status="completed").assign("7", "Nurse")
