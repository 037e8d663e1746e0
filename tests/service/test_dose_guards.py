"""The guards at the bedside through the use case: early dose, dose interval and 24-hour
total refused (409 with conflicts) until each has a reason that counts, the overrides kept
on the entry and in its event; a hard limit refused (422) whatever the reasons."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.inputs import hospital_time_zone
from patients import use_cases
from patients.domain import checks, mar
from patients.domain.errors import InvalidTransition, OrderConflicts
from patients.persistence import queries

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk1", display_name="Clerk One", roles=("clerk",))
DOCTOR = Actor(id="8", username="drwho", display_name="Dr Who", roles=("clinician",))
NURSE = Actor(id="9", username="nurse1", display_name="Nurse One", roles=("nurse",))
GOOD = "Agreed with the ward doctor at the bedside"


@pytest.fixture
def patient(his_store) -> str:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Gus", "Guarded", date(1960, 5, 5)), UnitOfWork(his_store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Fracture"),
                            UnitOfWork(his_store), actor=CLERK)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=DOCTOR)
    return pid


def prescribe(store, pid: str, **more: Any) -> str:
    values: dict[str, Any] = {"medication_code": "PARA", "dose": Decimal("1000"), "unit": "mg",
                              "route": "PO", "frequency": "Q6H", **more}
    order = use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="medication",
                                                       **values),
                                  UnitOfWork(store), actor=DOCTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"),
                             UnitOfWork(store), actor=NURSE)
    return order.order_id


def record(store, pid: str, oid: str, **values: Any):
    values = {"dose": Decimal("1000"), "unit": "mg", **values}
    return use_cases.administer(use_cases.Administer(pid, oid, **values), UnitOfWork(store),
                                actor=NURSE)


def open_slots(store, pid: str, oid: str) -> list[str]:
    """The order's open dose times from now on, today and tomorrow (hospital time)."""
    today = datetime.now(hospital_time_zone()).date()
    found = []
    for day in (today, today + timedelta(days=1)):
        for order in use_cases.medication_record(store, pid, day)["orders"]:
            if order["orderId"] == oid:
                found += [s["scheduledFor"] for s in order["slots"]
                          if s["status"] in mar.OPEN_STATUSES]
    now = datetime.now(UTC)
    return sorted({s for s in found if mar.parse_instant(s) > now})


def test_a_second_dose_a_minute_after_the_first_and_hours_early_is_refused(
        his_store, patient) -> None:
    oid = prescribe(his_store, patient)
    first, second = open_slots(his_store, patient, oid)[:2]
    record(his_store, patient, oid, scheduled_for=first, overrides={"early-dose": GOOD},
           administered_at=(datetime.now(UTC) - timedelta(minutes=1)).isoformat())
    before = queries.order(his_store, patient, oid)["etag"]
    with pytest.raises(OrderConflicts) as err:
        record(his_store, patient, oid, scheduled_for=second)
    assert err.value.http_status == 409 and err.value.problem_type == "early-dose"
    said = {c["type"]: c for c in err.value.extra["conflicts"]}
    assert set(said) == {"early-dose", "dose-interval"}
    assert "early" in said["early-dose"]["detail"]
    assert "h between doses" in said["dose-interval"]["detail"]
    with pytest.raises(OrderConflicts) as err:  # "x" is no reason
        record(his_store, patient, oid, scheduled_for=second,
               overrides={"early-dose": "x", "dose-interval": "x"})
    assert all("10 characters" in c["reason_refused"] for c in err.value.extra["conflicts"])
    with pytest.raises(OrderConflicts) as err:  # each guard needs its own
        record(his_store, patient, oid, scheduled_for=second, overrides={"early-dose": GOOD})
    assert err.value.problem_type == "dose-interval"
    assert queries.order(his_store, patient, oid)["etag"] == before  # nothing written
    order = record(his_store, patient, oid, scheduled_for=second,
                   overrides={"early-dose": GOOD, "dose-interval": GOOD})
    entry = order.administrations[-1]
    assert [o["check"] for o in entry["overrides"]] == ["early-dose", "dose-interval"]
    assert all(o["reason"] == GOOD and o["by"] == "nurse1" for o in entry["overrides"])
    assert entry["override"] == entry["overrides"][0]
    event = next(e for e in queries.events(his_store, patient)[0]
                 if e["type"] == "MedicationAdministered")  # newest first
    assert event["data"]["overrides"] == entry["overrides"]


def test_the_24_hour_total_counts_every_order_of_the_medication(his_store, patient) -> None:
    a = prescribe(his_store, patient, as_needed=True)
    b = prescribe(his_store, patient, as_needed=True,
                  overrides={"duplicate-order": "Second prescription for the night team"})
    now = datetime.now(UTC)
    for hours in (20, 15, 10, 5):
        record(his_store, patient, a, administered_at=(now - timedelta(hours=hours)).isoformat())
    with pytest.raises(OrderConflicts) as err:
        record(his_store, patient, b)
    [conflict] = err.value.extra["conflicts"]
    assert conflict["type"] == "daily-dose" and "5000 mg" in conflict["detail"]
    order = record(his_store, patient, b, overrides={"daily-dose": GOOD})
    assert order.administrations[-1]["overrides"][0]["check"] == "daily-dose"


def test_the_doses_of_a_cancelled_order_still_count_in_the_24_hour_total(
        his_store, patient) -> None:
    """The record's one query brings the closed orders too: a dose given on an order that
    was cancelled since counts against the day's maximum of its medication."""
    a = prescribe(his_store, patient, as_needed=True)
    now = datetime.now(UTC)
    for hours in (20, 15, 10, 5):
        record(his_store, patient, a, administered_at=(now - timedelta(hours=hours)).isoformat())
    use_cases.progress_order(use_cases.ProgressOrder(patient, a, "cancel", "Changed to IV"),
                             UnitOfWork(his_store), actor=DOCTOR)
    assert queries.order(his_store, patient, a)["status"] == "cancelled"
    b = prescribe(his_store, patient, as_needed=True)
    with pytest.raises(OrderConflicts) as err:
        record(his_store, patient, b)
    [conflict] = err.value.extra["conflicts"]
    assert conflict["type"] == "daily-dose" and "5000 mg" in conflict["detail"]
    with pytest.raises(InvalidTransition):  # and the closed order takes no dose
        record(his_store, patient, a)


def test_a_day_above_the_hard_daily_limit_is_refused_whatever_the_reasons(
        his_store, patient) -> None:
    oid = prescribe(his_store, patient, dose=Decimal("2000"), as_needed=True,
                    overrides={"dose-limit": "Loading dose agreed with pharmacy"})
    now = datetime.now(UTC)
    every = {"daily-dose": GOOD, "dose-interval": GOOD, "early-dose": GOOD}
    for hours in (22, 17, 12, 7):
        record(his_store, patient, oid, dose=Decimal("2000"), overrides=every,
               administered_at=(now - timedelta(hours=hours)).isoformat())
    before = queries.order(his_store, patient, oid)["etag"]
    with pytest.raises(checks.DoseHardLimit) as err:
        record(his_store, patient, oid, dose=Decimal("2000"), overrides=every)
    assert err.value.http_status == 422 and err.value.problem_type == "dose-hard-limit"
    assert "10000 mg" in str(err.value) and "cannot be overridden" in str(err.value)
    assert queries.order(his_store, patient, oid)["etag"] == before


def test_a_dose_not_given_ahead_of_its_time_needs_a_reason_of_its_own(
        his_store, patient) -> None:
    oid = prescribe(his_store, patient)
    slot = open_slots(his_store, patient, oid)[-1]  # tomorrow: far ahead of its window
    with pytest.raises(OrderConflicts) as err:
        record(his_store, patient, oid, status="not_given", reason="held", dose=None,
               unit="", scheduled_for=slot)
    assert err.value.problem_type == "early-not-given"
    assert [c["type"] for c in err.value.extra["conflicts"]] == ["early-not-given"]
    assert "ahead" in err.value.extra["conflicts"][0]["detail"]
    assert queries.order(his_store, patient, oid)["administrations"] == []
    order = record(his_store, patient, oid, status="not_given", reason="held", dose=None,
                   unit="", scheduled_for=slot, overrides={"early-not-given": GOOD})
    # the guards of a dose given (interval, 24 hours) do not apply to a dose not given
    assert [(o["check"], o["reason"]) for o in order.administrations[-1]["overrides"]] == [
        ("early-not-given", GOOD)]
