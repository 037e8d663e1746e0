"""The chart's observations (apart from the observation pages, which build on the chart):
the latest score, recent sets in the paper chart's order, the SpO2 scale in force."""

from __future__ import annotations

from typing import Any

from hisadmin.core import policy
from hisadmin.core.store import get_store
from patients.domain import observations as rules
from patients.domain.observation_summary import needs_escalation
from patients.persistence import observations as stored

RECENT_SETS = 12  # the chart's table: half a day of hourly sets
# The table's column heads: short, so a set fits a 1024 px screen (units in the cells' head).
HEADS = {"respiration_rate": "Resp. /min", "spo2": "SpO2 %", "air_or_oxygen": "Air / O2",
         "systolic_bp": "BP mmHg", "pulse": "Pulse /min", "consciousness": "ACVPU",
         "temperature": "Temp °C"}


def row(o: dict[str, Any]) -> dict[str, Any]:
    """A set as the chart's table shows it: values with their scores, in chart order."""
    news2 = o.get("news2") or {}
    scores = news2.get("parameterScores") or {}
    oxygen = o.get("onOxygen")
    cells = [
        ("respiration_rate", o.get("respirationRate")), ("spo2", o.get("spo2")),
        ("air_or_oxygen", None if oxygen is None else (
            rules.OXYGEN_DEVICES.get(o.get("oxygenDevice") or "", "Oxygen") if oxygen
            else "Air")),
        ("systolic_bp", None if o.get("systolicBp") is None else
         f"{o['systolicBp']}/{o.get('diastolicBp') or '–'}"),
        ("pulse", o.get("pulse")), ("consciousness", o.get("consciousness")),
        ("temperature", o.get("temperature"))]
    risk = news2.get("risk")
    return {**o, "cells": [{"name": n, "value": v, "score": scores.get(n)} for n, v in cells],
            "score": news2.get("score"), "complete": news2.get("complete"),
            "risk": risk, "risk_label": rules.RISK_LABELS.get(rules.Risk(risk)) if risk else "",
            "scale": news2.get("scale", 1), "next_due_at": news2.get("nextDueAt"),
            "flagged": {f["field"] for f in o.get("flags") or ()}}


def chart_observations(patient_id: str, user: Any) -> dict[str, Any]:
    """The chart's section: the latest set, recent sets (newest first), the scale in force
    and what the user may do."""
    store = get_store()
    sets, _ = stored.page(store, patient_id, limit=RECENT_SETS)
    summary = stored.summary(store, patient_id) or {}
    scored = summary.get("scored")
    rows = [row(o) for o in sets]
    return {"sets": rows, "latest": rows[0] if rows else None, "scored": scored,
            "labels": [HEADS[n] for n in rules.SCORED],
            "risk_label": rules.RISK_LABELS.get(rules.Risk(scored["risk"])) if scored else "",
            "response": rules.RESPONSES.get(rules.Risk(scored["risk"])) if scored else "",
            "not_escalated": needs_escalation(scored), "scale2": summary.get("scale2"),
            "can_record": policy.allows(user, "record_observations"),
            "can_escalate": policy.allows(user, "escalate_observations"),
            "can_decide_scale": policy.allows(user, "decide_spo2_scale")}


MAX_CHARTED = 500  # a long stay's sets at most on one chart (three weeks of hourly sets)


def stay_sets(patient_id: str, admission_id: str | None) -> list[dict[str, Any]]:
    """The sets of one stay (``admission_id``; None: every set), oldest first, as rows."""
    store = get_store()
    sets: list[dict[str, Any]] = []
    token = None
    while len(sets) < MAX_CHARTED:
        page, token = stored.page(store, patient_id, limit=100, continuation=token)
        sets.extend(o for o in page if admission_id is None or o.get("admissionId") == admission_id)
        if not token:
            break
    return [row(o) for o in reversed(sets[:MAX_CHARTED])]
