"""Observations at the bedside: a set recorded and scored (``ObservationsRecorded``), a
clinician's SpO2 scale 2 decision and its end (``Spo2Scale2Decided`` / ``Spo2Scale2Ended``),
and the escalation of a score (``ObservationsEscalated``). Each is one batch: the set or
summary documents with the record's event."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import hospital_time_zone
from patients.domain import identity, mar
from patients.domain import observation_summary as summaries
from patients.domain import observations as rules
from patients.domain.errors import DomainError, InvalidInput
from patients.domain.events import (
    ObservationsEscalated,
    ObservationsRecorded,
    Spo2Scale2Decided,
    Spo2Scale2Ended,
)
from patients.persistence import observations as store
from patients.persistence.repository import PatientRecords

CLOCK_SKEW = timedelta(minutes=1)  # a monitor's clock a little ahead is not "the future"


class UnknownObservation(DomainError):
    http_status = 404
    title = "Unknown observation set"


class ScaleUnchanged(DomainError):
    http_status = 409
    title = "SpO2 scale unchanged"
    problem_type = "scale-unchanged"


@dataclass(frozen=True)
class RecordObservations:
    """``values``: the set's fields by their API names (:data:`rules.FIELDS`), any left
    out; ``taken_at``: when (None: now; without an offset, the hospital's time);
    ``scanned_id``: what the wristband scanner read (empty: no scan); ``source``: where a
    set sent by an interface came from (``system``: the sender, ``devices``: the monitors,
    ``controlId``: the message), kept with the set; ``key``: what makes the set unique for
    its sender (an interface's message and group): the same key and time record it once."""

    patient_id: str
    values: Mapping[str, Any] = field(default_factory=dict)
    taken_at: datetime | str | None = None
    scanned_id: str = ""
    source: Mapping[str, Any] | None = None
    key: str = ""


@dataclass(frozen=True)
class DecideScale:
    """``scale2``: True starts scale 2 (target 88–92 %), False ends it."""

    patient_id: str
    scale2: bool
    reason: str


@dataclass(frozen=True)
class EscalateObservations:
    patient_id: str
    observation_id: str
    told_whom: str
    response: str
    detail: str = ""
    told_at: datetime | str | None = None


def taken_at_checked(value: datetime | str | None, now: datetime) -> datetime:
    """When a set was taken (:class:`RecordObservations`' ``taken_at``), UTC; InvalidInput
    (``taken_at``) when it is not a time or in the future."""
    return _instant(value, "taken_at", now).astimezone(UTC)


def _instant(value: datetime | str | None, name: str, now: datetime) -> datetime:
    if value is None or value == "":
        return now
    try:
        moment = mar.parse_instant(value, hospital_time_zone())
    except (TypeError, ValueError):
        raise InvalidInput(f"{rules.LABELS.get(name, 'The time')} must be an ISO 8601 date "
                           "and time.", field=name) from None
    if moment > now + CLOCK_SKEW:
        raise InvalidInput("The time given cannot be in the future.", field=name)
    return moment


def _name(actor: Actor) -> str:
    return actor.display_name or actor.username


def record_observations(cmd: RecordObservations, uow: UnitOfWork, *, actor: Actor,
                        now: datetime | None = None) -> dict[str, Any]:
    """The set as stored (camelCase, with ``news2``). InvalidInput (422) naming the field
    for an impossible value or a future time; WrongPatient (409) for another wristband."""
    now = now or datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    confirmed_by = identity.confirm(cmd.scanned_id, record.patient.mrn)
    taken_at = _instant(cmd.taken_at, "taken_at", now).astimezone(UTC)
    values, flags = rules.checked(cmd.values)
    summary = store.load_summary(uow, cmd.patient_id)
    scale = summaries.scale_in_force(summary)
    news2 = rules.news2(values, scale=scale, taken_at=taken_at)
    stay = record.admission
    observation_id = store.new_id(taken_at, cmd.key or uuid.uuid4().hex)
    if cmd.key:
        earlier = store.load_set(uow, cmd.patient_id, observation_id)
        if earlier is not None:  # sent again after a lost answer: recorded once
            return earlier
    observation = {
        "observationId": observation_id,
        "takenAt": taken_at.isoformat(),
        **{rules.STORED[k]: v for k, v in values.items()},
        "flags": flags, "news2": news2.as_json(),
        "admissionId": None if stay is None else stay.admission_id,
        "wardId": None if stay is None else stay.ward_id,
        "bed": None if stay is None else stay.bed,
        "confirmedBy": confirmed_by, "recordedAt": now.isoformat(), "recordedBy": actor.id,
        "recordedByName": _name(actor)}
    if cmd.source:
        observation["source"] = dict(cmd.source)
    store.stage_set(uow, cmd.patient_id, observation)
    store.stage_summary(uow, cmd.patient_id, summaries.follow_set(summary, observation),
                        exists=summary is not None)
    records.save(record, [ObservationsRecorded(observation)], actor=actor, now=now)
    return observation


RACE_ATTEMPTS = 3


def record_observations_again_on_a_race(
        cmd: RecordObservations, new_uow: Callable[[], UnitOfWork], *, actor: Actor,
        now: datetime | None = None) -> tuple[dict[str, Any], UnitOfWork]:
    """:func:`record_observations`, run again with a fresh unit of work when another command
    on the patient committed between its read and its batch (StaleWrite): a set depends on
    nothing the other command could change but the SpO2 scale and the summary, and both are
    read again. The set as stored and the unit of work that committed it."""
    for attempt in range(RACE_ATTEMPTS):
        uow = new_uow()
        try:
            return record_observations(cmd, uow, actor=actor, now=now), uow
        except StaleWrite:
            if attempt == RACE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def decide_scale(cmd: DecideScale, uow: UnitOfWork, *, actor: Actor,
                 now: datetime | None = None) -> dict[str, Any]:
    """The summary after the decision. ScaleUnchanged (409) when scale 2 is already (or
    not) in force; InvalidInput (422) without a reason."""
    now = now or datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    reason = summaries.decision(cmd.reason)
    summary = store.load_summary(uow, cmd.patient_id)
    in_force = summaries.scale_in_force(summary) == 2
    if in_force == cmd.scale2:
        raise ScaleUnchanged("SpO2 scale 2 is already in force for this patient." if in_force
                             else "This patient's sets are already scored on SpO2 scale 1.")
    event: Spo2Scale2Decided | Spo2Scale2Ended
    if cmd.scale2:
        event = Spo2Scale2Decided(now.isoformat(), actor.id, _name(actor), reason)
        after = summaries.follow_scale(summary, event.payload())
    else:
        event = Spo2Scale2Ended(now.isoformat(), actor.id, _name(actor), reason)
        after = summaries.follow_scale(summary, None)
    store.stage_summary(uow, cmd.patient_id, after, exists=summary is not None)
    records.save(record, [event], actor=actor, now=now)
    return after


def escalate(cmd: EscalateObservations, uow: UnitOfWork, *, actor: Actor,
             now: datetime | None = None) -> dict[str, Any]:
    """The set with its escalation (``escalations``: each one recorded, oldest first).
    UnknownObservation (404); InvalidInput (422) naming the field."""
    now = now or datetime.now(UTC)
    records = PatientRecords(uow)
    record = records.load(cmd.patient_id)
    observation = store.load_set(uow, cmd.patient_id, cmd.observation_id)
    if observation is None:
        raise UnknownObservation(f"This patient has no observation set {cmd.observation_id}.")
    told = summaries.escalation(cmd.told_whom, cmd.response, cmd.detail)
    told_at = _instant(cmd.told_at, "told_at", now)
    event = ObservationsEscalated(cmd.observation_id, told["toldWhom"],
                                  told_at.astimezone(UTC).isoformat(), told["response"],
                                  told["detail"], actor.id, _name(actor))
    observation["escalations"] = [*observation.get("escalations", ()), event.payload()]
    store.update_set(uow, cmd.patient_id, observation)
    summary = store.load_summary(uow, cmd.patient_id)
    store.stage_summary(uow, cmd.patient_id,
                        summaries.follow_escalation(summary, event.payload()),
                        exists=summary is not None)
    records.save(record, [event], actor=actor, now=now)
    return observation
