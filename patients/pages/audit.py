"""One line per audit event, for the chart: what changed, in words a clerk can read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from patients.domain.events import EventType

Data = dict[str, Any]


def _bed(ward: str | None, bed: str | None) -> str:
    return f"{ward or '—'}{f' bed {bed}' if bed else ''}"


def _overrides(d: Data) -> str:
    """The order checks a placed order overrode, each with its reason."""
    return "".join(f"; overrode {o.get('check')}: {o.get('reason')}"
                   for o in d.get("overrides") or [])


_NOT_GIVEN = {"refused": "refused", "held": "held", "unavailable": "unavailable",
              "patient-absent": "patient absent", "other": "other"}


def _dose_time(d: Data) -> str:
    """The dose time an administration answers, and when it happened when that differs."""
    slot = (d.get("scheduledFor") or "")[:16].replace("T", " ")
    when = (d.get("administeredAt") or "")[:16].replace("T", " ")
    return (f" (dose due {slot} UTC)" if slot else "") + (
        f" at {when} UTC" if when and d.get("status", "given") == "given" else "")


_REMOVAL = {"entered-in-error": "entered in error", "resolved": "resolved", "other": "other"}


def _allergy_added(d: Data) -> str:
    said = ", ".join(x for x in (d.get("severity"), d.get("reaction")) if x)
    line = f"Allergy to {d.get('substance')} ({said})"
    if d.get("criticality") and d["criticality"] != "unable-to-assess":
        line += f", {d['criticality']} criticality"
    if "checkable" in d and not d["checkable"]:
        line += "; free text, not checked against orders"
    return line


_LINES: dict[str, Callable[[Data], str]] = {
    EventType.PATIENT_REGISTERED: lambda d: f"Registered {d.get('familyName', '').upper()}, "
                                   f"{d.get('givenName', '')} with MRN {d.get('mrn')}",
    EventType.DEMOGRAPHICS_UPDATED: lambda d: "Corrected " + ", ".join(
        f"{k}: {d.get('previous', {}).get(k)} → {v}" for k, v in d.items() if k != "previous"),
    EventType.ALLERGY_ADDED: lambda d: _allergy_added(d),
    EventType.ALLERGY_REMOVED: lambda d: f"Allergy to {d.get('substance')} removed"
                                + (f": {_REMOVAL.get(d['reason'], d['reason'])}"
                                   if d.get("reason") else "")
                                + (f" ({d['detail']})" if d.get("detail") else ""),
    EventType.NO_KNOWN_ALLERGIES_RECORDED: lambda d: "No known allergies recorded (asked, "
                                            "none reported)",
    EventType.ADMISSION_STARTED: lambda d: f"Admitted to {d.get('departmentId')} / "
                                  f"{_bed(d.get('wardId'), d.get('bed'))}: {d.get('reason')}",
    EventType.PATIENT_TRANSFERRED: lambda d: f"Moved {_bed(d.get('fromWard'), d.get('fromBed'))} → "
                                    f"{_bed(d.get('toWard'), d.get('toBed'))}",
    EventType.ADMISSION_ENDED: lambda d: f"Discharged ({d.get('disposition')})",
    EventType.MEDICATION_PRESCRIBED: lambda d: f"Prescribed {d.get('description')}"
                                      f"{_overrides(d)}",
    EventType.IMAGING_EXAM_REQUESTED: lambda d: f"Requested {d.get('description')}"
                                       f"{_overrides(d)}",
    EventType.LAB_TEST_REQUESTED: lambda d: f"Requested {d.get('description')}{_overrides(d)}",
    EventType.ORDER_CANCELLED: lambda d: f"Order cancelled: {d.get('cancelReason')}",
    EventType.ORDER_ASSIGNED: lambda d: f"Order assigned to {d.get('assigneeName')}",
    EventType.MEDICATION_ADMINISTERED: lambda d: f"Given {d.get('dose')} {d.get('unit')}"
                                        f"{_dose_time(d)}"
                                        f"{': ' + d['note'] if d.get('note') else ''}"
                                        f"{_overrides({'overrides': [d['override']]}) if d.get('override') else ''}",
    EventType.MEDICATION_NOT_GIVEN: lambda d: f"Dose not given{_dose_time(d)}: "
                                     f"{_NOT_GIVEN.get(d.get('reason') or '', d.get('reason'))}"
                                     f"{' (' + d['reasonDetail'] + ')' if d.get('reasonDetail') else ''}",
    EventType.RESULTS_RECORDED: lambda d: f"Results of {d.get('description')}: {_flags(d)}",
    EventType.RESULT_ACKNOWLEDGED: lambda d: "Results reviewed",
}


def _flags(d: Data) -> str:
    flags = d.get("flags") or {}
    if d.get("kind") == "imaging":
        return "report written"
    out = [f"{code} high" for code in flags.get("high", [])]
    out += [f"{code} low" for code in flags.get("low", [])]
    return ", ".join(out) if out else "all within range"


def describe(event_type: str, data: Data) -> str:
    line = _LINES.get(event_type)
    if line is None:
        return ""
    try:
        return line(data)
    except (AttributeError, TypeError):  # an old event shape: show the type alone
        return ""
