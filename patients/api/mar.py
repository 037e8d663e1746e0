"""JSON API for the medication administration record: ``GET /api/v1/patients/{id}/mar``."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import Field

from hisadmin.core import policy
from hisadmin.core.inputs import Text, hospital_time_zone, hospital_today
from hisadmin.core.store import get_store
from patients import use_cases
from patients.api.schemas import (
    ERRORS_SCHEMA,
    AdministrationOut,
    DataErrorOut,
    administration_out,
)
from patients.domain import mar
from patients.domain.mar import SLOT_STATUSES

router = Router(tags=["medication administration record"])

SlotStatus = Literal[SLOT_STATUSES]  # type: ignore[valid-type]


class SlotOut(Schema):
    slot_id: str = Field(description="the slot's stable name (order id and its minute in "
                         "UTC): give it as slot_id to POST …/administrations")
    scheduled_for: str = Field(description="the dose time, ISO 8601 in UTC to the minute; "
                               "standard times are the hospital's local clock times")
    status: SlotStatus = Field(description="upcoming; due from 30 min before to 60 min after "
                               "the time; late after that; missed once the day is over; "
                               "given / not_given when recorded")
    administration: AdministrationOut | None = None


class MarOrderOut(Schema):
    order_id: str
    description: str
    status: str
    medication_code: str | None = None
    medication_name: str | None = None
    dose: str | None = None
    unit: str | None = None
    route: str | None = None
    frequency: str | None = None
    frequency_hours: float = 0
    as_needed: bool = False
    prn_min_interval_hours: float | None = None
    start_at: str
    end_at: str | None = None
    etag: str
    slots: list[SlotOut] = Field(description="the day's dose times (none for PRN orders)")
    administrations: list[AdministrationOut] = Field(
        description="every administration recorded that day, oldest first")
    data_errors: list[DataErrorOut] = Field(
        [], description="stored fields that could not be read (a start time: no slots)")


class MarOut(Schema):
    patient_id: str
    date: str
    now: str
    orders: list[MarOrderOut]


def mar_out(record: dict[str, Any]) -> dict[str, Any]:
    return {"patient_id": record["patientId"], "date": record["date"], "now": record["now"],
            "orders": [{
                "order_id": o["orderId"], "description": o["description"],
                "status": o["status"], "medication_code": o.get("medicationCode"),
                "medication_name": o.get("medicationName"), "dose": o.get("dose"),
                "unit": o.get("unit"), "route": o.get("route"),
                "frequency": o.get("frequency"), "frequency_hours": o["frequencyHours"],
                "as_needed": bool(o.get("asNeeded")),
                "prn_min_interval_hours": o.get("prnMinIntervalHours"),
                "start_at": o.get("startAt") or o["placedAt"], "end_at": o.get("endAt"),
                "etag": o["etag"],
                "slots": [{"slot_id": s["slotId"], "scheduled_for": s["scheduledFor"],
                           "status": s["status"],
                           "administration": administration_out(s["administration"])
                           if s["administration"] else None} for s in o["slots"]],
                "administrations": [administration_out(e) for e in o["administrations"]],
                "data_errors": o.get("dataErrors") or [],
            } for o in record["orders"]]}


def parse_day(value: str | None) -> date:
    """``YYYY-MM-DD`` from 1900 to 2100; today (in the hospital's time zone) when empty; else
    :class:`mar.BadDay`, a 400 (type /api/v1/problems/bad-day)."""
    if not value:
        return hospital_today()
    return mar.parse_day(value)


@router.get("/patients/{patient_id}/mar", response={200: MarOut, **ERRORS_SCHEMA},
            summary="The medication administration record for one day")
def medication_record(request: HttpRequest, patient_id: str, date: Text(20) | None = None
                      ) -> dict[str, Any]:
    """Each medication order active on ``date`` (YYYY-MM-DD, in the hospital's time zone; default
    today) with its dose times and their status, and the day's administrations (for PRN
    orders, the only entries). A malformed date, or one outside 1900–2100 → 400; unknown
    patient → 404."""
    policy.require(request.user, "read")
    day = parse_day(date)
    return mar_out(use_cases.medication_record(get_store(), patient_id, day,
                                               tz=hospital_time_zone()))
