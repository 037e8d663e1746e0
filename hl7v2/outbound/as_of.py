"""The patient and their stays as they were at an event's position in the stream. Pure.

A message says what was true when its event happened, however late it is sent (a backlog,
a replay, an engine down for a day). The record is read as it is now, then the events after
the message's own are undone, newest first; each says enough to undo it:

- ``PatientDemographicsUpdated`` carries the corrected fields' ``previous`` values;
- ``AllergyAdded`` names the allergy added (gone before it), ``AllergyRemoved`` the one
  removed (active before it: the record keeps removed allergies), and
  ``NoKnownAllergiesRecorded`` the statement made (not there before it);
- ``AdmissionStarted`` the stay begun (none before it), ``PatientTransferred`` where the
  patient came from, ``AdmissionEnded`` the stay ended (active before it, where it ended).

Events after the message's are newer than it, so they are kept at least as long as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class PatientState:
    given_name: str
    family_name: str
    birth_date: str  # ISO 8601
    sex: str
    allergies: tuple[Mapping[str, Any], ...]  # every allergy, with its status
    no_known_allergies: bool


@dataclass(frozen=True)
class StayState:
    admission_id: str
    ward_id: str
    bed: str | None
    attending_id: str
    attending_name: str
    started_at: str
    ended_at: str | None
    status: str  # active | ended


def rewind(patient: PatientState, stays: Iterable[StayState],
           later: Iterable[Mapping[str, Any]]) -> tuple[PatientState, list[StayState]]:
    """``patient`` and ``stays`` as they were before the stored events ``later`` (the ones
    after the message's event, in any order: undone newest first)."""
    stay_list = list(stays)
    for event in sorted(later, key=lambda e: int(e["seq"]), reverse=True):
        kind, data = str(event["type"]), dict(event.get("data") or {})
        if kind == "PatientDemographicsUpdated":
            previous = data.get("previous") or {}
            patient = replace(
                patient, given_name=previous.get("givenName", patient.given_name),
                family_name=previous.get("familyName", patient.family_name),
                birth_date=previous.get("birthDate", patient.birth_date),
                sex=previous.get("sex", patient.sex))
        elif kind == "AllergyAdded":
            patient = replace(patient, allergies=tuple(
                a for a in patient.allergies if a.get("allergyId") != data.get("allergyId")))
        elif kind == "AllergyRemoved":
            patient = replace(patient, allergies=tuple(
                {**a, "status": "active"} if a.get("allergyId") == data.get("allergyId") else a
                for a in patient.allergies))
        elif kind == "NoKnownAllergiesRecorded":
            patient = replace(patient, no_known_allergies=False)
        elif kind == "AdmissionStarted":
            stay_list = [s for s in stay_list if s.admission_id != data.get("admissionId")]
        elif kind == "PatientTransferred":
            stay_list = [replace(s, ward_id=data.get("fromWard") or s.ward_id,
                                 bed=data.get("fromBed"))
                         if s.admission_id == data.get("admissionId") else s
                         for s in stay_list]
        elif kind == "AdmissionEnded":
            stay_list = [replace(s, status="active", ended_at=None,
                                 ward_id=data.get("wardId") or s.ward_id, bed=data.get("bed"))
                         if s.admission_id == data.get("admissionId") else s
                         for s in stay_list]
    return patient, stay_list


def no_known_allergies_at(events: Iterable[Mapping[str, Any]]) -> bool:
    """Whether "no known allergies" stood after ``events`` (a stream's first ones): the
    latest of a statement and an allergy added decides."""
    for event in sorted(events, key=lambda e: int(e["seq"]), reverse=True):
        if event["type"] == "NoKnownAllergiesRecorded":
            return True
        if event["type"] == "AllergyAdded":
            return False
    return False
