"""Admitting and discharging: the stay, its bed (held in its own partition) and its orders."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.beds import Occupant
from patients.domain.errors import InvalidInput, NotAdmitted, OrdersChanged
from patients.domain.events import AdmissionEnded, AdmissionStarted, Event, OrderProgressed
from patients.domain.records import DISPOSITIONS, Admission, clean_discharge_note
from patients.persistence import beds, reference
from patients.persistence.repository import PatientRecord, PatientRecords


@dataclass(frozen=True)
class AdmitPatient:
    patient_id: str
    department_id: str
    ward_id: str
    reason: str
    bed: str = ""
    attending_id: str = ""
    attending_name: str = ""
    expected_version: str | None = None  # of the patient: admitting acts on the record


@dataclass(frozen=True)
class DischargePatient:
    patient_id: str
    disposition: str
    expected_version: str | None = None  # of the active admission
    note: str = ""  # the discharge note
    # The active orders the user saw listed for cancelling; None: whatever is active (the
    # API's caller who did not ask). Any other set of active orders → OrdersChanged.
    cancel_order_ids: tuple[str, ...] | None = None


def admit_patient(cmd: AdmitPatient, uow: UnitOfWork, *, actor: Actor) -> Admission:
    """Start a stay, holding its bed first (StaleWrite, nothing written, if the patient
    changed since ``expected_version``)."""
    now = datetime.now(UTC)
    store = uow.store
    ward = reference.get(store, "Ward", cmd.ward_id, field="ward_id")
    department = reference.get(store, "Department", cmd.department_id, field="department_id")
    if ward["departmentId"] != cmd.department_id:  # named, not coded: the message is read
        raise InvalidInput(f"{ward.get('name') or cmd.ward_id} is not a ward of "
                           f"{department.get('name') or cmd.department_id}; choose one of "
                           "its wards.", field="ward_id")
    bed = cmd.bed.strip()
    if bed and bed not in ward.get("beds", []):
        raise InvalidInput(f"{ward.get('name') or cmd.ward_id} has no bed {bed}.", field="bed")
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    records.expect(record, record.patient, cmd.expected_version)
    # Only a clinician can be the attending: a clerk admitting is not one by default.
    clinician = "clinician" in actor.roles
    admission = Admission.start(
        admission_id=str(uuid.uuid4()), patient_id=cmd.patient_id,
        department_id=cmd.department_id, ward_id=cmd.ward_id, bed=bed or None,
        attending_id=cmd.attending_id or (actor.id if clinician and not cmd.attending_name
                                          else ""),
        attending_name=cmd.attending_name or (actor.display_name or actor.username
                                              if clinician else ""),
        reason=cmd.reason, now=now, active=record.admission)
    held = None
    if admission.bed:
        held = beds.reserve(store, ward_id=admission.ward_id, bed=admission.bed,
                            occupant=Occupant.of(record.patient, admission), now=now)
    try:
        record.admission = admission
        records.save(record, [AdmissionStarted(
            admission_id=admission.admission_id, department_id=admission.department_id,
            ward_id=admission.ward_id, bed=admission.bed, attending_id=admission.attending_id,
            attending_name=admission.attending_name, reason=admission.reason,
            started_at=admission.started_at)], actor=actor, now=now)
    except BaseException:
        if held is not None:
            beds.release(store, held)
        raise
    return admission


# A batch holds 100 operations: each cancelled order is two (order + event), plus the
# admission, the stream and the discharge event.
MAX_CANCELLATIONS_PER_BATCH = 45
DISCHARGE_REASON = "Patient discharged"


def cancel_orders(record: PatientRecord, admission_id: str, reason: str, *,
                  keep: int = 0) -> list[Event]:
    """Cancel the admission's active orders beyond the first ``keep`` (at most one batch's
    worth); returns their events."""
    events: list[Event] = []
    for order in record.active_orders(admission_id)[keep:][:MAX_CANCELLATIONS_PER_BATCH]:
        progress = order.transition("cancel", reason=reason)
        events.append(OrderProgressed(progress=progress, order_id=order.order_id,
                                      status=order.status, cancel_reason=order.cancel_reason,
                                      ended_at=order.ended_at))
    return events


def discharge_patient(cmd: DischargePatient, uow: UnitOfWork, *, actor: Actor) -> Admission:
    """End the active stay and cancel its active orders, each with its event, in one batch
    (StaleWrite if the stay changed since ``expected_version``; OrdersChanged, nothing
    written, if the active orders are not the ``cancel_order_ids`` confirmed)."""
    if cmd.disposition not in DISPOSITIONS:
        raise InvalidInput(f"Disposition must be one of {', '.join(DISPOSITIONS)}.",
                           field="disposition")
    now = datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    admission = record.admission
    if admission is None:
        raise NotAdmitted("This patient has no active admission to discharge.")
    records.expect(record, admission, cmd.expected_version)
    active = [o.order_id for o in record.active_orders(admission.admission_id)]
    if cmd.cancel_order_ids is not None and set(cmd.cancel_order_ids) != set(active):
        # An order placed, or one finished, since the list was shown: nothing is cancelled
        # that the user did not see listed.
        raise OrdersChanged(active)
    note = clean_discharge_note(cmd.note)  # before any write: bad input writes nothing
    # Discharge ends the stay and cancels its still-active orders, each with its own event,
    # in the discharge batch. A stay with more active orders than one batch holds first
    # cancels the surplus in batches of their own: each is a whole command, and a failure
    # in between leaves the stay active to retry.
    while surplus := cancel_orders(record, admission.admission_id, DISCHARGE_REASON,
                                   keep=MAX_CANCELLATIONS_PER_BATCH):
        records.save(record, surplus, actor=actor, now=now)
    cancellations = cancel_orders(record, admission.admission_id, DISCHARGE_REASON)
    admission.end(disposition=cmd.disposition, now=now, note=note)
    records.save(record, [*cancellations, AdmissionEnded(
        admission_id=admission.admission_id, disposition=admission.disposition,
        ended_at=admission.ended_at, ward_id=admission.ward_id, bed=admission.bed,
        note=admission.discharge_note)], actor=actor, now=now)
    return admission  # its bed is given back after the event (use_cases.beds)
