"""The chart's handover notes (apart from the handover pages, which build on the chart)."""

from __future__ import annotations

from typing import Any

from hisadmin.core import policy
from hisadmin.core.store import get_store
from patients.domain.errors import DomainError
from patients.domain.handovers import SBAR_LABELS
from patients.domain.shifts import SHIFT_LABELS, Shift
from patients.persistence import handovers


def sbar_parts(note: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of the note's four parts, in SBAR order."""
    return [(label, note.get(key) or "") for key, label in SBAR_LABELS.items()]


def chart_handovers(patient_id: str, user: Any) -> dict[str, Any]:
    """The chart's handover section: the latest notes (newest shift first) and what the
    user may do with them."""
    notes = handovers.latest(get_store(), patient_id)
    for n in notes:
        n["label"] = _label(n["shift"])
        n["parts"] = sbar_parts(n)
        for version in n.get("earlier") or ():
            version["parts"] = sbar_parts(version)
        n["can_acknowledge"] = (policy.allows(user, "acknowledge_handover")
                                and not n.get("acknowledgedAt")
                                and str(n.get("writtenBy")) != str(user.pk))
    return {"notes": notes, "can_write": policy.allows(user, "write_handover")}


def _label(shift_name: str) -> str:
    try:
        shift = Shift.parse(shift_name)
    except DomainError:
        return shift_name
    day = f"{shift.day:%a} {shift.day.day} {shift.day:%b %Y}"
    return f"{SHIFT_LABELS[shift.kind]}, {day}"


