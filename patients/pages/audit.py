"""One line per audit event, for the chart: what changed, in words a clerk can read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Data = dict[str, Any]


def _bed(ward: str | None, bed: str | None) -> str:
    return f"{ward or '—'}{f' bed {bed}' if bed else ''}"


_LINES: dict[str, Callable[[Data], str]] = {
    "PatientRegistered": lambda d: f"Registered {d.get('familyName', '').upper()}, "
                                   f"{d.get('givenName', '')} with MRN {d.get('mrn')}",
    "PatientDemographicsUpdated": lambda d: "Corrected " + ", ".join(
        f"{k}: {d.get('previous', {}).get(k)} → {v}" for k, v in d.items() if k != "previous"),
    "AllergyAdded": lambda d: f"Allergy to {d.get('substance')} ({d.get('severity')})",
    "AllergyRemoved": lambda d: f"Allergy to {d.get('substance')} removed",
    "AdmissionStarted": lambda d: f"Admitted to {d.get('departmentId')} / "
                                  f"{_bed(d.get('wardId'), d.get('bed'))}: {d.get('reason')}",
    "PatientTransferred": lambda d: f"Moved {_bed(d.get('fromWard'), d.get('fromBed'))} → "
                                    f"{_bed(d.get('toWard'), d.get('toBed'))}",
    "AdmissionEnded": lambda d: f"Discharged ({d.get('disposition')})",
    "MedicationPrescribed": lambda d: f"Prescribed {d.get('description')}",
    "ImagingExamRequested": lambda d: f"Requested {d.get('description')}",
    "LabTestRequested": lambda d: f"Requested {d.get('description')}",
    "OrderCancelled": lambda d: f"Order cancelled: {d.get('cancelReason')}",
    "OrderAssigned": lambda d: f"Order assigned to {d.get('assigneeName')}",
    "MedicationAdministered": lambda d: f"Given {d.get('dose')} {d.get('unit')}"
                                        f"{': ' + d['note'] if d.get('note') else ''}",
}


def describe(event_type: str, data: Data) -> str:
    line = _LINES.get(event_type)
    if line is None:
        return ""
    try:
        return line(data)
    except (AttributeError, TypeError):  # an old event shape: show the type alone
        return ""
