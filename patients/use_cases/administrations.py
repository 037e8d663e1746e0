"""Recording a medication administration: a dose given, or a dose not given with a reason.

One use case for every way a dose is recorded (the chart's Administer, the MAR's Record,
Medications due's Record, the API): each record of a scheduled order closes exactly one dose
time (slot), named by ``slot_id`` or by ``scheduled_for`` (to the minute), or, when neither
is given, the one open slot due at the time of the dose; none or several → 422 on
``slot_id`` with the candidates. A slot already answered → 409."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any

from django.conf import settings

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import hospital_time_zone
from patients.domain import checks, dose_times, guards, identity, mar
from patients.domain.errors import InvalidInput, InvalidTransition
from patients.domain.events import (
    Event,
    EventType,
    MedicationAdministered,
    MedicationNotGiven,
    OrderProgressed,
)
from patients.domain.orders import Order
from patients.domain.units import convert
from patients.persistence import queries, reference
from patients.persistence.repository import PatientRecord, PatientRecords
from patients.use_cases.orders import overridden

CLOCK_SKEW = timedelta(minutes=1)  # a device clock a little ahead is not "the future"
# how far ahead a dose with no dose time open on its day looks for the next one
NEXT_SLOT_HORIZON = timedelta(days=31)


@dataclass(frozen=True)
class Administer:
    patient_id: str
    order_id: str
    dose: Decimal | None = None
    unit: str = ""
    note: str = ""
    expected_version: str | None = None  # of the order
    status: str = mar.GIVEN  # given | not_given
    administered_at: datetime | str | None = None  # when it happened; None: now
    reason: str = ""  # not given: refused | held | unavailable | patient-absent | other
    reason_detail: str = ""  # the text for ``other``
    scheduled_for: datetime | str | None = None  # the dose time (slot) it answers
    slot_id: str = ""  # or the slot by its id (mar.slot_id); neither: the one due now
    # guard (early-dose, dose-interval, daily-dose) → reason, 10 characters and two words
    overrides: dict[str, str] = field(default_factory=dict)
    # what a scanner read from the wristband: must be the patient's MRN (empty: no scan)
    scanned_id: str = ""


def _clean(text: str, limit: int) -> str:
    return " ".join((text or "").split())[:limit]


def _instant(value: datetime | str, name: str) -> datetime:
    try:
        return mar.parse_instant(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name.replace('_', ' ').capitalize()} must be an ISO 8601 date "
                           "and time.", field=name) from None


def _given(cmd: Administer, order: Order, store: Any, at: datetime) -> dict[str, Any]:
    """The dose fields of a dose given, checked against the order (422 on any rule)."""
    if cmd.dose is None or cmd.dose <= 0:
        raise InvalidInput("Give the dose given, more than 0.", field="dose")
    if not cmd.unit:
        raise InvalidInput("Give the unit of the dose.", field="unit")
    unit = reference.get(store, "Unit", cmd.unit, field="unit")
    ordered_unit_code = order.details.get("unit")
    ordered_dose = order.details.get("dose")
    if ordered_unit_code and ordered_dose:
        ordered_unit = reference.all_of(store, "Unit").get(ordered_unit_code) or {
            "code": ordered_unit_code}
        given = convert(cmd.dose, unit, ordered_unit)  # UnitMismatch (422) across dimensions
        if given > Decimal(str(ordered_dose)):
            raise InvalidInput(
                f"{format(cmd.dose.normalize(), 'f')} {cmd.unit} is more than the ordered "
                f"dose of {ordered_dose} {ordered_unit_code}; give at most the ordered dose.",
                field="dose")
    if at > datetime.now(UTC) + CLOCK_SKEW:
        raise InvalidInput("The time given cannot be in the future.", field="administered_at")
    return {"dose": format(cmd.dose.normalize(), "f"), "unit": cmd.unit}


def _not_given(cmd: Administer) -> dict[str, Any]:
    reason = (cmd.reason or "").strip().lower().replace("_", "-")  # patient_absent too
    if reason not in mar.NOT_GIVEN_REASONS:
        raise InvalidInput("Say why the dose was not given: "
                           f"{', '.join(mar.NOT_GIVEN_REASONS)}.", field="reason")
    # the text for "other": reason_detail, or the note when that is where it was written
    detail = _clean(cmd.reason_detail or (cmd.note if reason == "other" else ""), 300)
    if reason == "other" and not detail:
        raise InvalidInput("Describe the other reason.", field="reason_detail")
    return {"dose": None, "unit": None, "reason": reason, "reasonDetail": detail or None}


class SlotRequired(InvalidInput):
    """A dose of a scheduled order that names no slot, when no open slot, or more than one,
    is due at its time: the nurse says which (``candidates``: the day's open slots)."""

    title = "Which dose time?"
    problem_type = "slot-required"

    def __init__(self, message: str, candidates: list[dict[str, str]]) -> None:
        super().__init__(message, field="slot_id", extra={"candidates": candidates})
        self.candidates = candidates


def frequency_hours(order: Order, store: Any) -> float:
    """The interval of an order placed before schedules: its own, else its frequency's."""
    hours = order.details.get("frequencyHours")
    if hours is None:
        frequency = reference.all_of(store, "Frequency").get(order.details.get("frequency")
                                                             or "") or {}
        hours = frequency.get("hours")
    return float(hours or 0)


def candidates(order: Order, hours: float, at: datetime, now: datetime, tz: tzinfo
               ) -> list[dict[str, str]]:
    """The open slots of the day (in ``tz``) of a dose at ``at``: {slot_id, scheduled_for,
    status}."""
    day = mar.Day(at.astimezone(tz).date(), tz)
    return [{"slot_id": mar.slot_id(order.order_id, t), "scheduled_for": dose_times.slot_text(t),
             "status": mar.slot_status(t, None, now, day.end)}
            for t in mar.open_slots(order.as_record(), hours, day.start, day.end)]


def resolve_slot(cmd: Administer, order: Order, store: Any, at: datetime, now: datetime
                 ) -> datetime | None:
    """The one slot this record closes (None for an as-needed order): the one named, which
    must be the order's and not yet answered, or the one due at ``at``."""
    record = order.as_record()
    hours = frequency_hours(order, store)
    named, field_name = None, "slot_id"
    if cmd.slot_id:
        try:
            order_id, named = dose_times.parse_slot_id(cmd.slot_id)
        except ValueError:
            raise InvalidInput(f"{cmd.slot_id[:80]!r} is not a slot id of the medication "
                               "record.", field="slot_id") from None
        if order_id != order.order_id:
            raise InvalidInput("That slot belongs to another order.", field="slot_id")
    elif cmd.scheduled_for:
        named, field_name = _instant(cmd.scheduled_for, "scheduled_for"), "scheduled_for"
    if mar.is_prn(record):
        if named is not None:
            raise InvalidInput("An as-needed order has no dose times; leave "
                               f"{field_name} empty.", field=field_name)
        return None
    if named is None:
        slot = mar.due_slot(record, hours, at)
        if slot is None:
            raise _which_slot(order, hours, at, now)
        return slot
    slot = mar.find_slot(record, hours, named)
    if slot is None:
        raise InvalidInput("{at} is not one of this order's dose times.", field=field_name,
                           at=dose_times.minute(named))
    if mar.slot_key(slot) in mar.recorded_keys(order.administrations):
        raise InvalidTransition("The dose at {at} is already recorded; reload the medication "
                                "record.", at=dose_times.minute(slot))
    return slot


def _which_slot(order: Order, hours: float, at: datetime, now: datetime) -> SlotRequired:
    """Why no dose time was found for a dose at ``at``, in words, with the dose times the
    nurse may choose: the day's open ones; the dose time already answered near ``at``
    (given at HH:MM, not "none is due"); when the day has none open, the next one (the first
    of an order placed after the day's last time), to give now with a reason."""
    tz = hospital_time_zone()
    options = candidates(order, hours, at, now, tz)
    said = []
    answered = mar.answered_near(order.administrations, at)
    if answered is not None:
        done_slot, entry = answered
        how = ("given" if mar.entry_status(entry) == mar.GIVEN else "recorded as not given")
        said.append(f"The {done_slot.astimezone(tz):%H:%M} dose is already {how} at "
                    f"{mar.administered_at(entry).astimezone(tz):%H:%M}.")
    near = [c for c in options if c["status"] == "due"]
    if options:
        said.append("To record another dose, say which dose time it answers."
                     if answered is not None else
                     ("Several dose times are due" if len(near) > 1 else "No dose time is due")
                     + f" at {at.astimezone(tz):%H:%M}; say which dose time this answers.")
        return SlotRequired(" ".join(said), options)
    day = mar.Day(at.astimezone(tz).date(), tz)
    upcoming = mar.open_slots(order.as_record(), hours, day.end, day.end + NEXT_SLOT_HORIZON)
    if not upcoming:
        said.append(f"No dose time of this order is open on {day.day:%a %d %b}, nor in the "
                    "days after it.")
        return SlotRequired(" ".join(said), [])
    first = upcoming[0]
    which = "next" if order.administrations else "first"
    said.append(f"No dose time of this order is open on {day.day:%a %d %b}: the {which} is "
                f"due {first.astimezone(tz):%a %d %b, %H:%M}. To give it now, choose it "
                "and give a reason for the early dose; for an extra dose, ask the prescriber "
                "for a one-off (STAT) order.")
    return SlotRequired(" ".join(said), [{
        "slot_id": mar.slot_id(order.order_id, first),
        "scheduled_for": dose_times.slot_text(first),
        "status": mar.slot_status(first, None, now, day.end + NEXT_SLOT_HORIZON)}])


def early_window() -> timedelta:
    """How long before its slot a dose may be given without an early-dose warning:
    ``settings.EARLY_DOSE_WINDOW_MINUTES`` (default 60). Read on every call."""
    return timedelta(minutes=int(getattr(settings, "EARLY_DOSE_WINDOW_MINUTES",
                                         guards.EARLY_WINDOW_MINUTES)))


def _doses_of(order: Order, record: PatientRecord, store: Any) -> list[guards.GivenDose]:
    """Every dose of the order's medication given to the patient, on any of their orders:
    the open ones, and the closed ones (completed, cancelled) whose doses still count in a
    24-hour total, all loaded with the record in its one query
    (``PatientRecords.load(closed_orders=True)``)."""
    code = order.details.get("medicationCode") or ""
    med = reference.all_of(store, "Medication").get(code) or {}
    units = reference.all_of(store, "Unit")
    loaded = {o.order_id: o.as_record() for o in record.orders.values()}
    closed = [o for oid, o in record.closed_orders.items()
              if o.get("medicationCode") == code and oid not in loaded]
    return guards.given_doses([*loaded.values(), *closed], code, units,
                              units.get(med.get("doseUnit") or ""))


def _guarded(cmd: Administer, order: Order, record: PatientRecord, store: Any, at: datetime,
             slot: datetime | None, *, actor: Actor, now: datetime) -> list[dict[str, str]]:
    """Check a dose given against the guards at the bedside. A dose above a hard limit is
    refused (``DoseHardLimit``, 422, no override); an early dose, one too soon after that
    order's last, or one that takes the 24-hour total past the maximum is refused
    (``OrderConflicts``, 409) unless each has its own reason; the overrides to keep."""
    overrides = checks.clean_overrides(cmd.overrides)
    code = order.details.get("medicationCode") or ""
    med = reference.all_of(store, "Medication").get(code) or {}
    frequency = reference.all_of(store, "Frequency").get(order.details.get("frequency") or "")
    units = reference.all_of(store, "Unit")
    dose_unit = units.get(med.get("doseUnit") or "")
    assert cmd.dose is not None  # _given checked it
    amount = (convert(cmd.dose, units.get(cmd.unit) or {"code": cmd.unit}, dose_unit)
              if dose_unit else cmd.dose)
    unit_code = (dose_unit or {}).get("code") or cmd.unit
    doses = _doses_of(order, record, store)
    before = guards.given_in_day(doses, at)
    why = guards.hard_stop(med, before, amount, code=unit_code) if med else None
    if why:
        raise checks.DoseHardLimit(why)
    found = guards.guards(order=order.as_record(), slot=slot, at=at, window=early_window(),
                          doses=doses, medication=med, frequency=frequency, amount=amount,
                          code=unit_code, tz=hospital_time_zone())
    return overridden(found, overrides, actor=actor, now=now,
                      refused="The dose was not recorded.", change="check the dose and time")


def _early_not_given(cmd: Administer, slot: datetime | None, at: datetime, *, actor: Actor,
                     now: datetime) -> list[dict[str, str]]:
    """A dose recorded as not given before the early window of its slot is refused
    (``OrderConflicts``, 409, ``early-not-given``) unless it has its own reason."""
    found = guards.early_not_given(slot, at, early_window(), hospital_time_zone())
    return overridden([found] if found else [], checks.clean_overrides(cmd.overrides),
                      actor=actor, now=now, refused="The dose was not recorded.",
                      change="record it nearer its time")


def administer(cmd: Administer, uow: UnitOfWork, *, actor: Actor) -> Order:
    """Record one administration on a medication order: a dose given (dose and unit
    convertible to the ordered unit, not above the ordered dose, at a time not in the
    future; past the guards at the bedside, :func:`_guarded`) or not given
    (with a reason; ahead of its time only with a reason of its own,
    :func:`_early_not_given`), closing exactly one slot of a scheduled order (:func:`resolve_slot`).
    A wristband scanned (``scanned_id``) must be the patient's (``WrongPatient``, 409) and is
    kept as ``identityConfirmedBy: "scan"`` on the administration and its event.
    ``MedicationAdministered`` / ``MedicationNotGiven``, and ``OrderStarted`` when the
    first dose given starts a ready order."""
    now = datetime.now(UTC)
    if cmd.status not in mar.RECORD_STATUSES:
        raise InvalidInput("Status must be given or not_given.", field="status")
    at = _instant(cmd.administered_at, "administered_at") if cmd.administered_at else now
    records = PatientRecords(uow)
    # the closed orders too: their doses count in the 24-hour total (one query, not two)
    record, order = records.load_order(cmd.patient_id, cmd.order_id, cmd.expected_version,
                                       closed_orders=True)
    # the wrong patient's wristband stops the record before anything about the dose is said
    confirmed_by = identity.confirm(cmd.scanned_id, record.patient.mrn)
    store = uow.store
    # what was given is checked first (a 422 on its field), then whether the order takes a
    # dose now (409), before the slot: a prescription not ready has none due
    fields = (_given(cmd, order, store, at) if cmd.status == mar.GIVEN else _not_given(cmd))
    order.check_administrable()
    slot = resolve_slot(cmd, order, store, at, now)
    overrides = (_guarded(cmd, order, record, store, at, slot, actor=actor, now=now)
                 if cmd.status == mar.GIVEN else _early_not_given(cmd, slot, at, actor=actor,
                                                                  now=now))
    entry = {"administrationId": str(uuid.uuid4()), "status": cmd.status,
             "at": now.isoformat(), "administeredAt": mar.instant_text(at),
             "scheduledFor": dose_times.slot_text(slot) if slot else None,
             "slotId": mar.slot_id(order.order_id, slot) if slot else None, **fields,
             "reason": fields.get("reason"), "reasonDetail": fields.get("reasonDetail"),
             # every guard overridden, who and why; ``override``: the first, as before
             "overrides": overrides, "override": overrides[0] if overrides else None,
             "by": actor.username, "note": _clean(cmd.note, 300),
             "identityConfirmedBy": confirmed_by}
    started = order.administer({**entry, "dose": cmd.dose if cmd.status == mar.GIVEN else None})
    order.administrations[-1] = entry  # kept as a decimal string, like the ordered dose
    event: Event = (MedicationAdministered(order_id=order.order_id, record=entry)
                    if cmd.status == mar.GIVEN
                    else MedicationNotGiven(order_id=order.order_id, record=entry))
    events = [event]
    if started:
        events.append(OrderProgressed(progress=EventType.ORDER_STARTED, order_id=order.order_id,
                                      status=order.status))
    records.save(record, events, actor=actor, now=now)
    return order


def medication_record(store: Any, patient_id: str, day: date, *, tz: tzinfo | None = None,
                      now: datetime | None = None) -> dict[str, Any]:
    """The patient's MAR for ``day`` (a calendar day in ``tz``, default the hospital's
    time zone): each medication order active that day, oldest first, with its dose times
    (``slots``: slotId, scheduledFor, status, administration) and every administration
    recorded that day. Two queries in the patient's partition (the patient, its orders);
    reference data from the cache."""
    queries.patient(store, patient_id)  # 404 for an unknown patient
    tz = tz or hospital_time_zone()
    span = mar.Day(day, tz)
    now = now or datetime.now(UTC)
    frequencies = reference.all_of(store, "Frequency")
    medications = reference.all_of(store, "Medication")
    rows = []
    for order in sorted(queries.orders(store, patient_id), key=lambda o: o["placedAt"]):
        if not mar.active_on(order, span, tz):
            continue
        hours = order.get("frequencyHours")
        if hours is None:  # older orders: their frequency's interval
            hours = (frequencies.get(order.get("frequency") or "") or {}).get("hours") or 0
        med = medications.get(order.get("medicationCode") or "") or {}
        rows.append({**order, **mar.day_record(order, hours, span, now),
                     "frequencyHours": hours,
                     "prnMinIntervalHours": med.get("prnMinIntervalHours")})
    return {"patientId": patient_id, "date": day.isoformat(), "now": mar.instant_text(now),
            "orders": rows}
