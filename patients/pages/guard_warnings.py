"""The guards' warnings on the pages that record a dose (the MAR's Record, Medications due's
Record, the chart's Administer): each guard that fired with its own reason box, the reasons
tied to the dose they were given for; a hard stop is a form error with no box."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from patients.domain.checks import DOSE_GUARDS
from patients.domain.errors import OrderConflicts
from patients.pages.clinical_forms import OverrideForm

SIGNED = ("status", "dose", "unit", "administered_at", "slot_id", "scheduled_for")


def dose_signature(order_id: str, data: Mapping[str, Any]) -> str:
    """What the dose record says (order, slot, status, dose, unit, time), as a short digest:
    a reason counts only for the dose it was given for."""
    said = json.dumps({"order": order_id, **{k: str(data.get(k) or "") for k in SIGNED}},
                      sort_keys=True)
    return hashlib.sha256(said.encode()).hexdigest()[:20]


def given_reasons(post: Mapping[str, Any], signature: str) -> dict[str, str]:
    """The guards' reasons on this submit, when they were given for this same dose."""
    if post.get("signature") != signature:
        return {}
    reasons = OverrideForm(post).reasons()
    return {check: reason for check, reason in reasons.items() if check in DOSE_GUARDS}


def refused(exc: OrderConflicts, signature: str, reasons: Mapping[str, str], *,
            answered: bool) -> OverrideForm:
    """The warnings of a refused dose, one by one, each with its reason field (the reasons
    already given kept; one missing or too short says so on its field)."""
    shown = exc.extra["conflicts"]
    data = {"signature": signature}
    for c in shown:
        data[OverrideForm.field_name(c["type"])] = reasons.get(c["type"], "")
    form = OverrideForm(data, shown=shown)
    form.is_valid()
    if answered:
        for c in shown:
            if c.get("reason_refused"):
                form.add_error(OverrideForm.field_name(c["type"]), c["reason_refused"])
            elif not reasons.get(c["type"]):
                form.add_error(OverrideForm.field_name(c["type"]),
                               "Give a reason to record this dose anyway, or change it.")
    return form
