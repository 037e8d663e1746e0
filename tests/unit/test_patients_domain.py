"""Domain rules of the clinical record, plain Python."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from patients.domain.errors import InvalidInput, NotAdmitted, PatientAlreadyAdmitted, UnknownAllergy
from patients.domain.orders import InvalidTransition, Order
from patients.domain.records import Admission, Patient, fold

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


def test_it_administers_only_active_medication_and_the_first_dose_starts_it() -> None:
    with pytest.raises(InvalidTransition):
        order(kind="lab", status="ready").administer({"dose": 1})
    with pytest.raises(InvalidTransition):
        order(status="cancelled").administer({"dose": 1})
    for status in ("created", "ready"):  # a new prescription needs no "ready" step first
        o = order(status=status)
        assert o.administer({"dose": 1}) is True
        assert (o.status, len(o.administrations)) == ("in_progress", 1)
    held = order(status="created")
    assert held.administer({"status": "not_given", "dose": None}) is False
    assert held.status == "created"


def test_it_assigns_only_active_orders() -> None:
    o = order()
    assert o.assign("7", "Nurse") == "OrderAssigned"
    assert o.assign(None, None) == "OrderUnassigned"
    with pytest.raises(InvalidTransition):
        order(status="completed").assign("7", "Nurse")


def patient() -> Patient:
    return Patient.register(patient_id="p", mrn="H0000001", given_name="Ana", family_name="Ruiz",
                            birth_date=date(1980, 1, 1), sex="female", today=NOW.date(), now=NOW)


def test_it_reports_only_the_demographics_that_changed() -> None:
    p = patient()
    changes = p.correct(given_name="Ana", family_name=" Ruiz  Gil ", birth_date=date(1980, 1, 1),
                        sex="female", now=NOW)
    assert changes == {"familyName": "Ruiz Gil", "previous": {"familyName": "Ruiz"}}
    assert p.version == 2
    assert p.correct(given_name="Ana", family_name="Ruiz Gil", birth_date=date(1980, 1, 1),
                     sex="female", now=NOW) == {}
    assert p.version == 2


def test_it_refuses_a_future_birth_date_on_correction() -> None:
    with pytest.raises(InvalidInput) as err:
        patient().correct(given_name="A", family_name="B", birth_date=date(2999, 1, 1),
                          sex="female", now=NOW)
    assert err.value.field == "birth_date"


def test_it_records_an_allergy_once_per_substance() -> None:
    p = patient()
    p.add_allergy(allergy_id="a1", substance="Penicillin", reaction="Rash", severity="severe",
                  now=NOW, by="doc")
    with pytest.raises(InvalidInput) as err:
        p.add_allergy(allergy_id="a2", substance="PENICILLIN", reaction="", severity="mild",
                      now=NOW, by="doc")
    assert err.value.field == "substance"
    with pytest.raises(InvalidInput) as err:
        p.add_allergy(allergy_id="a3", substance="Latex", reaction="", severity="deadly",
                      now=NOW, by="doc")
    assert err.value.field == "severity"
    assert [a["allergyId"] for a in p.allergies] == ["a1"]


def test_it_removes_a_recorded_allergy_and_refuses_an_unknown_one() -> None:
    p = patient()
    p.add_allergy(allergy_id="a1", substance="Latex", reaction="", severity="mild", now=NOW,
                  by="doc")
    removed = p.remove_allergy("a1", reason="entered-in-error", now=NOW, by="doc")
    assert (removed["substance"], removed["status"]) == ("Latex", "removed")
    with pytest.raises(UnknownAllergy):
        p.remove_allergy("a1", reason="resolved", now=NOW)


def admission() -> Admission:
    return Admission.start(admission_id="a", patient_id="p", department_id="MED",
                           ward_id="MED-1", bed="M101", attending_id="1", attending_name="Dr",
                           reason="Pneumonia", now=NOW, active=None)


def test_it_transfers_and_keeps_the_move_history() -> None:
    a = admission()
    move = a.transfer(ward_id="CARD-A", department_id="CARD", bed="A01", now=NOW, by="clerk")
    assert (a.ward_id, a.bed, a.department_id) == ("CARD-A", "A01", "CARD")
    assert move["fromWard"] == "MED-1" and move["fromBed"] == "M101"
    assert a.transfers == [move]


def test_it_refuses_a_transfer_to_the_same_place_or_after_discharge() -> None:
    a = admission()
    with pytest.raises(InvalidInput):
        a.transfer(ward_id="MED-1", department_id="MED", bed="M101", now=NOW, by="clerk")
    a.end(disposition="home", now=NOW)
    with pytest.raises(NotAdmitted):
        a.transfer(ward_id="MED-2", department_id="MED", bed=None, now=NOW, by="clerk")


def test_it_needs_a_reason_to_admit() -> None:
    with pytest.raises(InvalidInput) as err:
        Admission.start(admission_id="a", patient_id="p", department_id="MED", ward_id="MED-1",
                        bed=None, attending_id="1", attending_name="Dr", reason="  ", now=NOW,
                        active=None)
    assert err.value.field == "reason"
