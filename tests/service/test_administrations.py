"""Recording administrations: a dose given (unit converted, not above the ordered dose, not in
the future), not given (with a reason), the dose time answered, the PRN interval (409,
overridable), and the day's MAR read from the record."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.inputs import hospital_time_zone
from patients import use_cases
from patients.domain import mar
from patients.domain.errors import (
    DomainError,
    InvalidInput,
    InvalidTransition,
    OrderConflicts,
    UnitMismatch,
)
from patients.persistence import queries
from patients.use_cases.administrations import SlotRequired
from tests.web.fixed_clock import fixed_clock  # noqa: F401

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk1", display_name="Clerk One", roles=("clerk",))
DOCTOR = Actor(id="8", username="drwho", display_name="Dr Who", roles=("clinician",))
NURSE = Actor(id="9", username="nurse1", display_name="Nurse One", roles=("nurse",))


@pytest.fixture
def patient(his_store) -> str:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Mar", "Tin", date(1960, 5, 5)), UnitOfWork(his_store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Cellulitis"),
                            UnitOfWork(his_store), actor=CLERK)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=DOCTOR)
    return pid


def prescribe(store, pid: str, **more: Any) -> str:
    values: dict[str, Any] = {"medication_code": "AMOX", "dose": Decimal("1"), "unit": "g",
                              "route": "PO", "frequency": "Q8H", "first_dose": "now", **more}
    order = use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="medication",
                                                       **values),
                                  UnitOfWork(store), actor=DOCTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"),
                             UnitOfWork(store), actor=NURSE)
    return order.order_id


def record(store, pid: str, oid: str, **values: Any):
    return use_cases.administer(use_cases.Administer(pid, oid, **values), UnitOfWork(store),
                                actor=NURSE)


def test_a_dose_given_in_a_convertible_unit_is_recorded_with_its_event(
        his_store, patient) -> None:
    oid = prescribe(his_store, patient)
    when = datetime.now(UTC) - timedelta(minutes=5)
    order = record(his_store, patient, oid, dose=Decimal("1000"), unit="mg",
                   administered_at=when.isoformat())
    [entry] = order.administrations
    assert entry["status"] == "given" and entry["dose"] == "1000" and entry["unit"] == "mg"
    assert entry["administeredAt"] == mar.instant_text(when) and entry["by"] == "nurse1"
    assert entry["reason"] is None and entry["override"] is None
    assert order.status == "in_progress"
    events = [e["type"] for e in queries.events(his_store, patient)[0]]
    assert events[:2] == ["OrderStarted", "MedicationAdministered"]


def test_the_default_is_a_dose_given_now(his_store, patient) -> None:
    oid = prescribe(his_store, patient)
    [entry] = record(his_store, patient, oid, dose=Decimal("500"), unit="mg").administrations
    assert entry["status"] == "given"
    assert abs(mar.parse_instant(entry["administeredAt"]) - datetime.now(UTC)) < timedelta(
        minutes=1)


@pytest.mark.parametrize(("values", "error", "field"), [
    ({"dose": Decimal("5000"), "unit": "mg"}, InvalidInput, "dose"),
    ({"dose": Decimal("1.5"), "unit": "g"}, InvalidInput, "dose"),
    ({"dose": Decimal("5"), "unit": "ml"}, UnitMismatch, "unit"),
    ({"dose": None, "unit": "mg"}, InvalidInput, "dose"),
    ({"dose": Decimal("1"), "unit": "g",
      "administered_at": (datetime.now(UTC) + timedelta(hours=1)).isoformat()},
     InvalidInput, "administered_at"),
    ({"dose": Decimal("1"), "unit": "g", "administered_at": "yesterday"}, InvalidInput,
     "administered_at"),
    ({"status": "maybe"}, InvalidInput, "status"),
    ({"status": "not_given"}, InvalidInput, "reason"),
    ({"status": "not_given", "reason": "bored"}, InvalidInput, "reason"),
    ({"status": "not_given", "reason": "other", "reason_detail": "  "}, InvalidInput,
     "reason_detail"),
])
def test_the_rules_refuse_with_422_and_write_nothing(
        his_store, patient, values: dict[str, Any], error: type[DomainError],
        field: str) -> None:
    oid = prescribe(his_store, patient)
    before = queries.order(his_store, patient, oid)
    with pytest.raises(error) as err:
        record(his_store, patient, oid, **values)
    assert err.value.http_status == 422 and err.value.field == field
    assert queries.order(his_store, patient, oid)["etag"] == before["etag"]


def test_a_dose_not_given_needs_a_reason_and_does_not_start_the_order(
        his_store, patient) -> None:
    oid = prescribe(his_store, patient)
    order = record(his_store, patient, oid, status="not_given", reason="other",
                   reason_detail="Nil by mouth for theatre")
    [entry] = order.administrations
    assert entry["status"] == "not_given" and entry["reason"] == "other"
    assert entry["reasonDetail"] == "Nil by mouth for theatre" and entry["dose"] is None
    assert order.status == "ready"
    [event] = [e for e in queries.events(his_store, patient)[0]
               if e["type"] == "MedicationNotGiven"]
    assert event["data"]["orderId"] == oid and event["data"]["reason"] == "other"


def test_a_dose_time_is_answered_once(his_store, patient) -> None:
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    oid = prescribe(his_store, patient, start_at=start.isoformat())
    order = record(his_store, patient, oid, status="not_given", reason="refused",
                   scheduled_for=start.isoformat())
    assert order.administrations[0]["scheduledFor"] == mar.instant_text(
        start.replace(second=0))  # a dose time is a minute
    with pytest.raises(InvalidTransition):
        record(his_store, patient, oid, dose=Decimal("1"), unit="g",
               scheduled_for=start.isoformat())
    with pytest.raises(InvalidInput) as err:
        record(his_store, patient, oid, dose=Decimal("1"), unit="g",
               scheduled_for=(start + timedelta(hours=1)).isoformat())
    assert err.value.field == "scheduled_for"


def test_a_prn_dose_too_soon_is_a_409_until_overridden(his_store, patient) -> None:
    oid = prescribe(his_store, patient, medication_code="PARA", dose=Decimal("1000"),
                    unit="mg", frequency="Q6H", as_needed=True)
    first = datetime.now(UTC) - timedelta(hours=3)
    record(his_store, patient, oid, dose=Decimal("1"), unit="g",
           administered_at=first.isoformat())
    before = queries.order(his_store, patient, oid)
    with pytest.raises(OrderConflicts) as err:
        record(his_store, patient, oid, dose=Decimal("1000"), unit="mg")
    assert err.value.http_status == 409 and err.value.problem_type == "dose-interval"
    [conflict] = err.value.extra["conflicts"]
    assert conflict["type"] == "dose-interval" and "at least 4 h" in conflict["detail"]
    assert queries.order(his_store, patient, oid)["etag"] == before["etag"]
    with pytest.raises(OrderConflicts):
        record(his_store, patient, oid, dose=Decimal("1000"), unit="mg",
               overrides={"prn-interval": "  "})
    order = record(his_store, patient, oid, dose=Decimal("1000"), unit="mg",
                   overrides={"prn_interval": "Pyrexia 39.5, discussed with Dr Who"})
    override = order.administrations[-1]["override"]
    assert override["check"] == "dose-interval" and override["by"] == "nurse1"
    assert override["reason"] == "Pyrexia 39.5, discussed with Dr Who"
    # a dose not given never counts, and one at the interval is fine
    record(his_store, patient, oid, status="not_given", reason="patient-absent")


def test_a_prn_dose_after_the_interval_needs_no_override(his_store, patient) -> None:
    oid = prescribe(his_store, patient, medication_code="PARA", dose=Decimal("1000"),
                    unit="mg", frequency="Q6H", as_needed=True)
    record(his_store, patient, oid, dose=Decimal("1000"), unit="mg",
           administered_at=(datetime.now(UTC) - timedelta(hours=4, minutes=1)).isoformat())
    assert record(his_store, patient, oid, dose=Decimal("500"), unit="mg").administrations[
        -1]["override"] is None


def test_prn_orders_have_no_dose_times(his_store, patient) -> None:
    oid = prescribe(his_store, patient, medication_code="PARA", dose=Decimal("1000"),
                    unit="mg", frequency="Q6H", as_needed=True)
    with pytest.raises(InvalidInput) as err:
        record(his_store, patient, oid, dose=Decimal("1"), unit="g",
               scheduled_for=datetime.now(UTC).isoformat())
    assert err.value.field == "scheduled_for"


def test_a_new_prescription_takes_a_dose_and_the_first_given_starts_it(
        his_store, patient) -> None:
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=patient, kind="medication", medication_code="AMOX", dose=Decimal("1"),
        unit="g", route="PO", frequency="Q8H", first_dose="now"), UnitOfWork(his_store),
        actor=DOCTOR)
    assert order.status == "created"  # nobody marked it ready
    given = record(his_store, patient, order.order_id, dose=Decimal("1"), unit="g")
    assert given.status == "in_progress" and given.administrations[0]["status"] == "given"
    events = [e["type"] for e in queries.events(his_store, patient)[0]]
    assert events[:2] == ["OrderStarted", "MedicationAdministered"]


def test_a_cancelled_prescription_takes_no_dose(his_store, patient) -> None:
    oid = prescribe(his_store, patient)
    use_cases.progress_order(use_cases.ProgressOrder(patient, oid, "cancel", "Wrong drug"),
                             UnitOfWork(his_store), actor=DOCTOR)
    with pytest.raises(InvalidTransition, match="cancelled: no dose can be recorded"):
        record(his_store, patient, oid, status="not_given", reason="held")


def test_the_mar_lists_the_days_slots_and_prn_doses(his_store, patient) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    today = now.date()
    start = datetime(today.year, today.month, today.day, tzinfo=UTC)
    amox = prescribe(his_store, patient, start_at=start.isoformat())
    para = prescribe(his_store, patient, medication_code="PARA", dose=Decimal("1000"),
                     unit="mg", frequency="Q6H", as_needed=True)
    record(his_store, patient, amox, dose=Decimal("1"), unit="g",
           scheduled_for=start.isoformat(), administered_at=start.isoformat())
    record(his_store, patient, para, dose=Decimal("500"), unit="mg")
    day = use_cases.medication_record(his_store, patient, today, now=now)
    by_id = {o["orderId"]: o for o in day["orders"]}
    slots = by_id[amox]["slots"]
    # the one-off first dose at the start, then Q8H's standard times (06, 14, 22)
    assert [s["scheduledFor"][11:16] for s in slots] == ["00:00", "06:00", "14:00", "22:00"]
    assert slots[0]["status"] == "given" and slots[0]["administration"]["dose"] == "1"
    assert {s["status"] for s in slots[1:]} <= {"upcoming", "due", "late"}
    assert by_id[para]["slots"] == [] and len(by_id[para]["administrations"]) == 1
    assert by_id[para]["prnMinIntervalHours"] == 4
    yesterday = use_cases.medication_record(his_store, patient, today - timedelta(days=1),
                                            now=now)
    assert yesterday["orders"] == []


def test_a_dose_with_no_dose_time_open_today_names_the_first_and_how_to_give_it_now(
        his_store, patient, settings) -> None:
    settings.HOSPITAL_TIME_ZONE = "Europe/London"
    with time_machine.travel(datetime(2026, 6, 10, 14, 10, tzinfo=UTC), tick=False):
        oid = prescribe(his_store, patient, frequency="OD", first_dose="next")  # 15:10 BST
        with pytest.raises(SlotRequired) as err:
            record(his_store, patient, oid, dose=Decimal("1"), unit="g")
        said = str(err.value)
        assert "No dose time of this order is open on Wed 10 Jun: the first is due " \
               "Thu 11 Jun, 08:00." in said and "give a reason for the early dose" in said
        assert "Every dose time" not in said
        [first] = err.value.candidates
        assert first["scheduled_for"] == "2026-06-11T07:00:00+00:00"
        with pytest.raises(OrderConflicts) as early:  # chosen: an early dose, with a reason
            record(his_store, patient, oid, dose=Decimal("1"), unit="g",
                   slot_id=first["slot_id"])
        assert early.value.problem_type == "early-dose"


def test_a_second_dose_in_the_same_window_says_when_the_first_was_given(
        his_store, patient, settings) -> None:
    settings.HOSPITAL_TIME_ZONE = "Europe/London"
    with time_machine.travel(datetime(2026, 6, 10, 6, 30, tzinfo=UTC), tick=False):
        oid = prescribe(his_store, patient, frequency="TDS", first_dose="next")
    with time_machine.travel(datetime(2026, 6, 10, 12, 45, tzinfo=UTC), tick=False):
        record(his_store, patient, oid, dose=Decimal("1"), unit="g")  # the 14:00 (BST) dose
        with pytest.raises(SlotRequired) as err:
            record(his_store, patient, oid, dose=Decimal("1"), unit="g")
    said = str(err.value)
    assert said.startswith("The 14:00 dose is already given at 13:45.")
    assert "No dose time is due" not in said
    assert {c["scheduled_for"][11:16] for c in err.value.candidates} == {"07:00", "19:00"}


@pytest.mark.parametrize("clock", ["23:50", "00:03", "13:10"])
def test_a_stopped_orders_mar_row_keeps_its_dose_times_up_to_the_stop(
        his_store, patient, fixed_clock, clock: str) -> None:  # noqa: F811
    """A dose given a little early, then the order cancelled before the dose's time: the
    row still has that dose time, with the administration in it; the times after the stop
    that nobody answered are gone. An order cancelled after its doses keeps them too. At
    23:50 the dose time is after midnight: the next day's MAR still shows the stopped
    order's row with its dose."""
    fixed_clock("2026-06-10", clock)
    tz = hospital_time_zone()
    now = datetime.now(UTC)
    soon = now.replace(second=0, microsecond=0) + timedelta(minutes=20)
    day = soon.astimezone(tz).date()
    early = prescribe(his_store, patient, medication_code="IBU", dose=Decimal("400"),
                      unit="mg", start_at=soon.isoformat(), first_dose="now")
    record(his_store, patient, early, dose=Decimal("400"), unit="mg",
           scheduled_for=soon.isoformat(), administered_at=now.isoformat())
    earlier = datetime.combine(now.astimezone(tz).date(), datetime.min.time(), tz)
    course = prescribe(his_store, patient, start_at=earlier.isoformat())
    given = mar.slots_between(queries.order(his_store, patient, course), 8, earlier, now)[0]
    record(his_store, patient, course, dose=Decimal("1"), unit="g",
           scheduled_for=given.isoformat(), administered_at=given.isoformat())
    for oid in (early, course):
        use_cases.progress_order(use_cases.ProgressOrder(patient, oid, "cancel",
                                                         reason="Rash after the dose"),
                                 UnitOfWork(his_store), actor=DOCTOR)

    def rows(on: date) -> dict[str, Any]:
        return {o["orderId"]: o for o in use_cases.medication_record(
            his_store, patient, on, tz=tz, now=now + timedelta(minutes=1))["orders"]}

    [slot] = rows(day)[early]["slots"]
    assert slot["scheduledFor"] == soon.astimezone(UTC).isoformat()
    assert slot["status"] == "given" and slot["administration"]["dose"] == "400"
    assert len(rows(day)[early]["administrations"]) == 1
    slots = rows(earlier.date())[course]["slots"]
    assert slots and all(mar.parse_instant(s["scheduledFor"]) <= now for s in slots)
    answered = [s for s in slots if s["administration"] is not None]
    assert [s["scheduledFor"] for s in answered] == [given.isoformat()]
    assert answered[0]["status"] == "given"
