"""Beds on a ward board: free, occupied (by whom, since when) or being cleaned.

A bed is free unless something holds it: an admission (occupied) or the cleaning that
follows a patient leaving it (a discharge or a transfer out). Only a free bed may be
assigned; a nurse or a clerk marks a cleaned bed free again. Plain Python: no store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from patients.domain import observation_summary as observed
from patients.domain.records import Admission, AllergyStatus, Patient, allergy_names


class BedState(StrEnum):
    FREE = "free"
    OCCUPIED = "occupied"
    CLEANING = "cleaning"


BED_STATE_LABELS = {
    BedState.FREE: "Free",
    BedState.OCCUPIED: "Occupied",
    BedState.CLEANING: "Being cleaned",
}


@dataclass(frozen=True)
class Occupant:
    """Who is in a bed, as the board shows them (kept with the bed, refreshed after the
    patient's demographics or allergies change)."""

    patient_id: str
    admission_id: str
    family_name: str
    given_name: str
    sex: str
    birth_date: str  # ISO date
    admitted_at: str  # ISO datetime: when the stay began (not when this bed was taken)
    allergy_status: str  # an AllergyStatus
    allergies: tuple[str, ...] = ()  # the active allergies' substances, severe first
    # The NEWS2 badge of this stay (observation_summary.badge); None on a card written
    # before badges, until the patient's next change refreshes it.
    news2: dict[str, Any] | None = field(default=None, hash=False)

    @classmethod
    def of(cls, patient: Patient, admission: Admission,
           observations: Mapping[str, Any] | None = None) -> Occupant:
        """``observations``: the patient's observation summary (None: no set yet)."""
        return cls(
            patient_id=patient.patient_id,
            admission_id=admission.admission_id,
            family_name=patient.family_name,
            given_name=patient.given_name,
            sex=patient.sex,
            birth_date=patient.birth_date.isoformat(),
            admitted_at=admission.started_at,
            allergy_status=str(patient.allergy_status),
            allergies=allergy_names(patient.allergies),
            news2=observed.badge(observations, admission.admission_id, admission.started_at),
        )

    @property
    def display_name(self) -> str:
        return f"{self.family_name.upper()}, {self.given_name}"

    @property
    def has_allergies(self) -> bool:
        return self.allergy_status == AllergyStatus.HAS_ALLERGIES

    def age(self, today: date) -> int | None:
        try:
            born = date.fromisoformat(self.birth_date)
        except ValueError:
            return None
        return today.year - born.year - ((today.month, today.day) < (born.month, born.day))

    def length_of_stay(self, today: date) -> int:
        """Whole days since admission (0 on the day of admission)."""
        try:
            started = datetime.fromisoformat(self.admitted_at).date()
        except ValueError:
            return 0
        return max(0, (today - started).days)

    def to_dict(self) -> dict[str, Any]:
        return {
            "patientId": self.patient_id,
            "admissionId": self.admission_id,
            "familyName": self.family_name,
            "givenName": self.given_name,
            "sex": self.sex,
            "birthDate": self.birth_date,
            "admittedAt": self.admitted_at,
            "allergyStatus": self.allergy_status,
            "allergies": list(self.allergies),
            "news2": self.news2,
        }

    @classmethod
    def from_dict(cls, c: dict[str, Any]) -> Occupant:
        return cls(
            patient_id=c["patientId"],
            admission_id=c["admissionId"],
            family_name=c.get("familyName", ""),
            given_name=c.get("givenName", ""),
            sex=c.get("sex", "unknown"),
            birth_date=c.get("birthDate", ""),
            admitted_at=c.get("admittedAt", ""),
            allergy_status=c.get("allergyStatus", AllergyStatus.UNKNOWN),
            allergies=tuple(str(n) for n in c.get("allergies") or ()),
            news2=c.get("news2"),
        )


@dataclass(frozen=True)
class Bed:
    """One bed of a ward as the board shows it; ``since``: when it entered its state
    (None for a free bed); ``occupant`` only for an occupied bed."""

    ward_id: str
    code: str
    state: BedState
    occupant: Occupant | None = None
    since: str | None = None

    @property
    def label(self) -> str:
        return BED_STATE_LABELS[self.state]


@dataclass(frozen=True)
class WardMetrics:
    beds: int
    occupied: int
    free: int
    cleaning: int


def ward_metrics(beds: Iterable[Bed]) -> WardMetrics:
    counts = Counter(b.state for b in beds)
    return WardMetrics(
        beds=sum(counts.values()),
        occupied=counts[BedState.OCCUPIED],
        free=counts[BedState.FREE],
        cleaning=counts[BedState.CLEANING],
    )
