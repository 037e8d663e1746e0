"""Clinical domain: patients and admissions as plain Python, with their rules.

No Django, no store: use cases in :mod:`patients.commands` load and save these through the
mapping in :mod:`patients.documents`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from .errors import InvalidInput, NotAdmitted, PatientAlreadyAdmitted

SEXES = ("female", "male", "other", "unknown")
MRN_PATTERN = re.compile(r"^[A-Z0-9][A-Z0-9-]{2,19}$")
NAME_MAX = 100


def fold(text: str) -> str:
    """Case- and accent-insensitive form used for name search."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).upper().strip()


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
    version: int = 1
    created_at: str = ""
    updated_at: str = ""

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
    status: str = "active"
    ended_at: str | None = None
    disposition: str | None = None
    transfers: list[dict[str, Any]] = field(default_factory=list)
    version: int = 1

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

    def end(self, *, disposition: str, now: datetime) -> None:
        if self.status != "active":
            raise NotAdmitted("This admission has already ended.")
        self.status = "ended"
        self.ended_at = now.isoformat()
        self.disposition = disposition
        self.version += 1
