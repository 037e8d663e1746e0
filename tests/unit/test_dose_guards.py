"""The guards at the bedside (early dose, interval, 24-hour total, hard stop), plain Python."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from patients.domain import guards
from patients.domain.guards import GivenDose

UNITS = {"mg": {"code": "mg", "dimension": "mass", "factor": 0.001},
         "g": {"code": "g", "dimension": "mass", "factor": 1}}
PARA = {"code": "PARA", "name": "Paracetamol", "doseUnit": "mg", "maxSingleDose": 1000,
        "maxDailyDose": 4000, "prnMinIntervalHours": 4}
Q6H = {"code": "Q6H", "hours": 6}
NOON = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
WINDOW = timedelta(minutes=60)


def order(order_id: str = "o1", *, prn: bool = False, code: str = "PARA",
          given: tuple[tuple[datetime, str, str], ...] = ()) -> dict[str, Any]:
    return {"orderId": order_id, "medicationCode": code, "medicationName": "Paracetamol",
            "asNeeded": prn, "frequency": "Q6H", "frequencyHours": 6,
            "administrations": [{"status": "given", "administeredAt": at.isoformat(),
                                 "dose": dose, "unit": unit} for at, dose, unit in given]}


def test_it_lets_a_dose_be_given_up_to_the_window_before_its_slot() -> None:
    assert guards.early_dose(NOON, NOON - WINDOW, WINDOW) is None
    assert guards.early_dose(NOON, NOON + 3 * HOUR, WINDOW) is None  # late is not early
    assert guards.early_dose(None, NOON - 9 * HOUR, WINDOW) is None  # no slot: no window


def test_it_warns_of_a_dose_given_8_and_a_half_hours_early() -> None:
    found = guards.early_dose(NOON, NOON - timedelta(hours=8, minutes=30), WINDOW)
    assert found is not None and found.type == "early-dose"
    assert "8 h 30 min early" in found.detail


def test_a_scheduled_order_without_a_minimum_interval_uses_half_its_hours() -> None:
    assert guards.min_interval_hours(order(), Q6H, PARA) == Decimal(3)
    assert guards.min_interval_hours(order(), {**Q6H, "minIntervalHours": 5}, PARA) == 5
    assert guards.min_interval_hours(order(), {"code": "ONCE", "hours": 0}, PARA) is None
    assert guards.min_interval_hours(order(prn=True), Q6H, PARA) == Decimal(4)


def test_it_warns_of_a_second_dose_a_minute_after_the_first() -> None:
    doses = [GivenDose("o1", NOON, Decimal(1000))]
    found = guards.dose_interval(doses, "o1", NOON + timedelta(minutes=1), Decimal(3),
                                 name="Paracetamol")
    assert found is not None and found.type == "dose-interval"
    assert "0 h 01 min before" in found.detail


def test_the_interval_counts_only_that_orders_doses() -> None:
    doses = [GivenDose("o2", NOON, Decimal(1000))]
    assert guards.dose_interval(doses, "o1", NOON + HOUR, Decimal(3), name="P") is None
    assert guards.dose_interval([GivenDose("o1", NOON, Decimal(1))], "o1", NOON + 3 * HOUR,
                                Decimal(3), name="P") is None


def test_the_24_hour_total_adds_every_order_of_the_medication_in_its_dose_unit() -> None:
    orders = [order("o1", given=((NOON - 2 * HOUR, "1", "g"),)),
              order("o2", given=((NOON - 20 * HOUR, "1000", "mg"),
                                 (NOON - 30 * HOUR, "1000", "mg"))),
              order("o3", code="IBU", given=((NOON - HOUR, "400", "mg"),))]
    doses = guards.given_doses(orders, "PARA", UNITS, UNITS["mg"])
    assert len(doses) == 3
    assert guards.given_in_day(doses, NOON) == Decimal(2000)  # the 30-hour-old dose is out


def test_doses_not_given_do_not_count() -> None:
    o = order()
    o["administrations"] = [{"status": "not_given", "administeredAt": NOON.isoformat(),
                             "dose": None, "unit": None, "reason": "refused"}]
    assert guards.given_doses([o], "PARA", UNITS, UNITS["mg"]) == []


def test_it_warns_when_the_days_total_would_pass_the_maximum() -> None:
    assert guards.daily_dose(PARA, Decimal(3000), Decimal(1000), code="mg") is None
    found = guards.daily_dose(PARA, Decimal(3500), Decimal(1000), code="mg")
    assert found is not None and found.type == "daily-dose" and "4500 mg" in found.detail


def test_a_dose_or_a_day_above_the_hard_limit_is_a_hard_stop() -> None:
    assert guards.hard_stop(PARA, Decimal(0), Decimal(2000), code="mg") is None
    single = guards.hard_stop(PARA, Decimal(0), Decimal(2001), code="mg")
    assert single is not None and "cannot be overridden" in single
    daily = guards.hard_stop(PARA, Decimal(7500), Decimal(1000), code="mg")
    assert daily is not None and "8500 mg" in daily


def test_every_guard_in_order() -> None:
    doses = [GivenDose("o1", NOON - timedelta(minutes=1), Decimal(3500))]
    found = guards.guards(order=order(), slot=NOON + timedelta(hours=8, minutes=29),
                          at=NOON, window=WINDOW, doses=doses, medication=PARA,
                          frequency=Q6H, amount=Decimal(1000), code="mg")
    assert [c.type for c in found] == ["early-dose", "dose-interval", "daily-dose"]
