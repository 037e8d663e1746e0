"""Clinical domain: patients and admissions as plain Python, with their rules.

No Django, no store: the use cases (:mod:`patients.use_cases`) load and save these through
the patient-record repository (:mod:`patients.persistence.repository`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from patients.domain.errors import (
    InvalidInput,
    InvalidTransition,
    NotAdmitted,
    PatientAlreadyAdmitted,
    UnknownAllergy,
)

SEXES = ("female", "male", "other", "unknown")
SEX_LABELS = {"female": "Female", "male": "Male", "other": "Other", "unknown": "Unknown"}
SEVERITIES = ("mild", "moderate", "severe")
SEVERITY_LABELS = {"mild": "Mild", "moderate": "Moderate", "severe": "Severe"}
CRITICALITIES = ("low", "high", "unable-to-assess")
CRITICALITY_LABELS = {"low": "Low", "high": "High", "unable-to-assess": "Unable to assess"}
REMOVAL_REASONS = ("entered-in-error", "resolved", "other")
REMOVAL_LABELS = {"entered-in-error": "Entered in error", "resolved": "Resolved",
                  "other": "Other"}


class AllergyStatus(StrEnum):
    """What the record says about allergies, derived (see :func:`allergy_status`)."""

    UNKNOWN = "unknown"  # nobody recorded either an allergy or "no known allergies"
    NO_KNOWN_ALLERGIES = "no_known_allergies"
    HAS_ALLERGIES = "has_allergies"


ALLERGY_STATUS_LABELS = {AllergyStatus.UNKNOWN: "Allergies not yet asked",
                         AllergyStatus.NO_KNOWN_ALLERGIES: "No known allergies",
                         AllergyStatus.HAS_ALLERGIES: "Allergies"}


def read_allergy(stored: dict[str, Any]) -> dict[str, Any]:
    """An allergy as stored, with the fields an allergy recorded before coding lacks: such
    an allergy is active, free text (not checkable) and of unassessed criticality."""
    return {"allergenCode": None, "checkable": False, "criticality": "unable-to-assess",
            "status": "active", "reaction": "", **stored}


def active_allergies(allergies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in map(read_allergy, allergies) if a["status"] == "active"]


SEVERITY_RANK = {"severe": 0, "moderate": 1, "mild": 2}  # the order allergies are listed in


def allergy_names(allergies: list[dict[str, Any]]) -> tuple[str, ...]:
    """The active allergies' substances, severe first, then by name."""
    active = sorted(active_allergies(allergies),
                    key=lambda a: (SEVERITY_RANK.get(a.get("severity") or "", 3),
                                   str(a.get("substance") or "").casefold()))
    return tuple(str(a.get("substance") or "") for a in active)


def allergies_in_words(status: AllergyStatus | str, names: Iterable[str] = ()) -> str:
    """What a list or card says of a patient's allergies: "Allergies: Penicillins, Latex",
    else the status in words ("No known allergies", "Allergies not yet asked"); allergies
    whose names are not at hand say to look at the chart."""
    status = AllergyStatus(status)
    if status != AllergyStatus.HAS_ALLERGIES:
        return ALLERGY_STATUS_LABELS[status]
    named = [n for n in names if n]
    return f"Allergies: {', '.join(named)}" if named else "Allergies: see the chart"


def allergy_status(allergies: list[dict[str, Any]],
                   no_known_allergies: dict[str, Any] | None) -> AllergyStatus:
    """Any active allergy → has allergies; else a recorded "no known allergies" → that;
    else unknown (never "none" by default: nobody may have asked)."""
    if active_allergies(allergies):
        return AllergyStatus.HAS_ALLERGIES
    if no_known_allergies:
        return AllergyStatus.NO_KNOWN_ALLERGIES
    return AllergyStatus.UNKNOWN
DISPOSITIONS = ("home", "transfer-other-facility", "care-home", "deceased", "self-discharge")
DISCHARGE_NOTE_MAX = 2000
DISPOSITION_LABELS = {"home": "Home", "transfer-other-facility": "Transfer to another facility",
                      "care-home": "Care home", "deceased": "Deceased",
                      "self-discharge": "Self-discharge"}


class AdmissionStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"


ADMISSION_STATUS_LABELS = {AdmissionStatus.ACTIVE: "Admitted", AdmissionStatus.ENDED: "Ended"}

MRN_PATTERN = re.compile(r"^[A-Z0-9][A-Z0-9-]{2,19}$")
NAME_MAX = 100


def fold(text: str) -> str:
    """Case- and accent-insensitive form used for name search."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).upper().strip()


def identity_key(family_name: str, given_name: str, birth_date: date) -> str:
    """Who a registration is about, for the possible-duplicate check: family and given name
    folded (case, accents and inner spacing ignored) and the birth date."""
    def name(text: str) -> str:
        return " ".join(fold(text).split())
    return f"{name(family_name)}|{name(given_name)}|{birth_date.isoformat()}"


def clean_name(value: str, field_name: str) -> str:
    value = " ".join((value or "").split())
    if not value:
        raise InvalidInput(f"{field_name.replace('_', ' ').capitalize()} is required.",
                           field=field_name)
    if len(value) > NAME_MAX:
        raise InvalidInput(f"At most {NAME_MAX} characters.", field=field_name)
    return value


def clean_mrn(value: str) -> str:
    value = (value or "").strip().upper()
    if not MRN_PATTERN.match(value):
        raise InvalidInput("An MRN is 3–20 letters, digits or dashes, e.g. H0001234.",
                           field="mrn")
    return value


def clean_discharge_note(value: str) -> str:
    value = (value or "").strip()
    if len(value) > DISCHARGE_NOTE_MAX:
        raise InvalidInput(f"Keep the discharge note to {DISCHARGE_NOTE_MAX} characters.",
                           field="note")
    return value


def clean_birth_date(value: date, today: date) -> date:
    if value > today:
        raise InvalidInput("Date of birth cannot be in the future.", field="birth_date")
    if value.year < today.year - 130:
        raise InvalidInput("Date of birth is more than 130 years ago.", field="birth_date")
    return value


@dataclass
class Patient:
    patient_id: str
    mrn: str
    given_name: str
    family_name: str
    birth_date: date
    sex: str = "unknown"
    allergies: list[dict[str, Any]] = field(default_factory=list)
    # {"recordedAt", "recordedBy"} while "no known allergies" stands; None otherwise
    no_known_allergies: dict[str, Any] | None = None
    version: int = 1
    created_at: str = ""
    updated_at: str = ""
    # Set while this record is being merged into another and once it is (the retired
    # record of a merge): {"mergeId", "survivorId", "survivorMrn", "state"}, state one of
    # patients.domain.merges.LOCK_STATES; None for a record of its own.
    merged_into: dict[str, Any] | None = None
    # The records merged into this one (it is their survivor): {"mergeId", "patientId",
    # "mrn"} each, kept until a merge is undone.
    merged_from: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def register(cls, *, patient_id: str, mrn: str, given_name: str, family_name: str,
                 birth_date: date, sex: str, today: date, now: datetime) -> Patient:
        if sex not in SEXES:
            raise InvalidInput(f"Sex must be one of {', '.join(SEXES)}.", field="sex")
        return cls(
            patient_id=patient_id,
            mrn=clean_mrn(mrn),
            given_name=clean_name(given_name, "given_name"),
            family_name=clean_name(family_name, "family_name"),
            birth_date=clean_birth_date(birth_date, today),
            sex=sex,
            created_at=now.isoformat(),
            updated_at=now.isoformat(),
        )

    @property
    def display_name(self) -> str:
        return f"{self.family_name.upper()}, {self.given_name}"

    def correct(self, *, given_name: str, family_name: str, birth_date: date, sex: str,
                now: datetime) -> dict[str, Any]:
        """Correct demographics; returns ``{field: new}`` plus ``previous`` (empty: no change)."""
        if sex not in SEXES:
            raise InvalidInput(f"Sex must be one of {', '.join(SEXES)}.", field="sex")
        new = {"givenName": clean_name(given_name, "given_name"),
               "familyName": clean_name(family_name, "family_name"),
               "birthDate": clean_birth_date(birth_date, now.date()).isoformat(), "sex": sex}
        old = {"givenName": self.given_name, "familyName": self.family_name,
               "birthDate": self.birth_date.isoformat(), "sex": self.sex}
        changed = {k: v for k, v in new.items() if old[k] != v}
        if not changed:
            return {}
        self.given_name, self.family_name = new["givenName"], new["familyName"]
        self.birth_date, self.sex = date.fromisoformat(new["birthDate"]), sex
        self._touch(now)
        return {**changed, "previous": {k: old[k] for k in changed}}

    @property
    def allergy_status(self) -> AllergyStatus:
        return allergy_status(self.allergies, self.no_known_allergies)

    def add_allergy(self, *, allergy_id: str, allergen: dict[str, Any] | None = None,
                    substance: str = "", reaction: str, severity: str,
                    criticality: str = "unable-to-assess", now: datetime,
                    by: str) -> dict[str, Any]:
        """Record an allergy to a coded ``allergen`` (reference entry: code, name; checkable)
        or, when none fits, to free-text ``substance`` (not checkable). Ends a recorded "no
        known allergies". Returns the allergy as kept on the record."""
        if allergen is not None:
            code, substance = allergen["code"], allergen["name"]
        else:
            code, substance = None, clean_name(substance, "substance")
        if severity not in SEVERITIES:
            raise InvalidInput("Severity must be mild, moderate or severe.", field="severity")
        if criticality not in CRITICALITIES:
            raise InvalidInput("Criticality must be low, high or unable-to-assess.",
                               field="criticality")
        for a in active_allergies(self.allergies):
            same = (a["allergenCode"] == code) if code else (
                not a["allergenCode"] and a["substance"].casefold() == substance.casefold())
            if same:
                raise InvalidInput(f"An allergy to {substance} is already recorded; remove it "
                                   "first to record it differently.",
                                   field="allergen_code" if code else "substance")
        reaction = " ".join((reaction or "").split())
        if len(reaction) > 200:
            raise InvalidInput("Describe the reaction in at most 200 characters.",
                               field="reaction")
        allergy = {"allergyId": allergy_id, "allergenCode": code, "substance": substance,
                   "checkable": code is not None, "reaction": reaction, "severity": severity,
                   "criticality": criticality, "status": "active",
                   "recordedAt": now.isoformat(), "recordedBy": by}
        self.allergies.append(allergy)
        self.no_known_allergies = None
        self._touch(now)
        return allergy

    def record_no_known_allergies(self, *, now: datetime, by: str) -> dict[str, Any]:
        """The explicit statement that the patient has no known allergies (asked, none)."""
        active = active_allergies(self.allergies)
        if active:
            names = ", ".join(a["substance"] for a in active)
            raise InvalidTransition(f"Allergies are recorded ({names}): remove them first if "
                                    "they were entered in error or have resolved.")
        if self.no_known_allergies:
            raise InvalidTransition("No known allergies is already recorded.")
        self.no_known_allergies = {"recordedAt": now.isoformat(), "recordedBy": by}
        self._touch(now)
        return dict(self.no_known_allergies)

    def remove_allergy(self, allergy_id: str, *, reason: str, detail: str = "", now: datetime,
                       by: str = "") -> dict[str, Any]:
        """Mark an active allergy removed, with its reason; it stays in the record."""
        index = next((i for i, a in enumerate(self.allergies)
                      if a["allergyId"] == allergy_id
                      and read_allergy(a)["status"] == "active"), None)
        if index is None:
            raise UnknownAllergy("That allergy is not on the record (it may have been removed "
                                 "meanwhile); reload the chart.")
        if reason not in REMOVAL_REASONS:
            raise InvalidInput("Give the reason: entered-in-error, resolved or other.",
                               field="reason")
        detail = " ".join((detail or "").split())
        if reason == "other" and not detail:
            raise InvalidInput("Say why the allergy is removed.", field="detail")
        if len(detail) > 300:
            raise InvalidInput("At most 300 characters.", field="detail")
        removed = {**read_allergy(self.allergies[index]), "status": "removed",
                   "removedAt": now.isoformat(), "removedBy": by, "removalReason": reason,
                   "removalDetail": detail}
        self.allergies[index] = removed
        self._touch(now)
        return removed

    def _touch(self, now: datetime) -> None:
        self.version += 1
        self.updated_at = now.isoformat()

    def age_on(self, day: date) -> int:
        years = day.year - self.birth_date.year
        return years - ((day.month, day.day) < (self.birth_date.month, self.birth_date.day))


@dataclass
class Admission:
    admission_id: str
    patient_id: str
    department_id: str
    ward_id: str
    bed: str | None
    attending_id: str
    attending_name: str
    reason: str
    started_at: str
    status: str = AdmissionStatus.ACTIVE
    ended_at: str | None = None
    disposition: str | None = None
    transfers: list[dict[str, Any]] = field(default_factory=list)
    version: int = 1
    discharge_note: str = ""

    @classmethod
    def start(cls, *, admission_id: str, patient_id: str, department_id: str, ward_id: str,
              bed: str | None, attending_id: str, attending_name: str, reason: str,
              now: datetime, active: Admission | None) -> Admission:
        if active is not None:
            raise PatientAlreadyAdmitted(
                "This patient already has an active admission; discharge or transfer instead."
            )
        reason = " ".join((reason or "").split())
        if not reason:
            raise InvalidInput("A reason for admission is required.", field="reason")
        return cls(admission_id=admission_id, patient_id=patient_id,
                   department_id=department_id, ward_id=ward_id, bed=bed or None,
                   attending_id=attending_id, attending_name=attending_name, reason=reason,
                   started_at=now.isoformat())

    def transfer(self, *, ward_id: str, department_id: str, bed: str | None, now: datetime,
                 by: str) -> dict[str, Any]:
        """Move to another ward and/or bed; returns the transfer record (also kept here)."""
        if self.status != AdmissionStatus.ACTIVE:
            raise NotAdmitted("Only an active admission can be transferred.")
        bed = bed or None
        if (self.ward_id, self.bed) == (ward_id, bed):
            raise InvalidInput("The patient is already in that ward and bed; choose another.",
                               field="bed" if bed else "ward_id")
        move = {"at": now.isoformat(), "fromWard": self.ward_id, "fromBed": self.bed,
                "toWard": ward_id, "toBed": bed, "toDepartment": department_id, "by": by}
        self.transfers.append(move)
        self.ward_id, self.bed, self.department_id = ward_id, bed, department_id
        self.version += 1
        return move

    def end(self, *, disposition: str, now: datetime, note: str = "") -> None:
        """End the stay with a coded ``disposition`` and an optional discharge ``note``."""
        if disposition not in DISPOSITIONS:
            raise InvalidInput(f"Disposition must be one of {', '.join(DISPOSITIONS)}.",
                               field="disposition")
        note = clean_discharge_note(note)
        if self.status != AdmissionStatus.ACTIVE:
            raise NotAdmitted("This admission has already ended.")
        self.status = AdmissionStatus.ENDED
        self.ended_at = now.isoformat()
        self.disposition = disposition
        self.discharge_note = note
        self.version += 1
