"""What a patient's observations amount to now, pure: the SpO2 scale in force, the latest
scored set (its score, risk, next set due and whether it was escalated) and the score of
the scored set before it (the trend).

The record keeps this summary beside its sets and the worklist projection folds the same
events with the same functions, so both always agree. A set taken earlier than the latest
scored one (entered late) is kept on the chart but changes neither the latest nor the trend.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from patients.domain.errors import InvalidInput
from patients.domain.observations import ESCALATE, Risk

ESCALATION_RESPONSES = {"reviewed": "Reviewed, no change to the plan",
                        "plan": "Reviewed, plan changed",
                        "critical-care": "Critical care called"}
BRIEF = ("observationId", "takenAt", "score", "risk", "scale")


def empty() -> dict[str, Any]:
    return {"scale2": None, "scored": None, "previousScore": None, "lastTakenAt": None,
            "lastObservationId": None, "lastComplete": None}


def scale_in_force(summary: Mapping[str, Any] | None) -> int:
    return 2 if summary and summary.get("scale2") else 1


def follow_set(summary: Mapping[str, Any] | None, observation: Mapping[str, Any]
               ) -> dict[str, Any]:
    """The summary after ``observation`` (an ``ObservationsRecorded`` payload)."""
    out = {**empty(), **(summary or {})}
    news2 = observation.get("news2") or {}
    taken = str(observation.get("takenAt") or "")
    if out["lastTakenAt"] is None or taken >= out["lastTakenAt"]:
        out.update(lastTakenAt=taken, lastObservationId=observation.get("observationId"),
                   lastComplete=bool(news2.get("complete")))
    scored = out["scored"]
    if news2.get("complete") and (scored is None or taken >= scored["takenAt"]):
        out["previousScore"] = None if scored is None else scored["score"]
        out["scored"] = {"observationId": observation.get("observationId"), "takenAt": taken,
                         "admissionId": observation.get("admissionId"),
                         "score": news2.get("score"), "risk": news2.get("risk"),
                         "scale": news2.get("scale"), "nextDueAt": news2.get("nextDueAt"),
                         "singleThree": 3 in (news2.get("parameterScores") or {}).values(),
                         "escalation": None}
    return out


def follow_escalation(summary: Mapping[str, Any] | None, data: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """The summary after an ``ObservationsEscalated`` payload: the latest scored set is
    escalated when it is the set named."""
    out = {**empty(), **(summary or {})}
    scored = out["scored"]
    if scored is not None and scored["observationId"] == data.get("observationId"):
        out["scored"] = {**scored, "escalation": {
            k: data.get(k) for k in ("toldWhom", "toldAt", "response", "recordedByName")}}
    return out


def follow_scale(summary: Mapping[str, Any] | None, decision: Mapping[str, Any] | None
                 ) -> dict[str, Any]:
    """The summary with scale 2 decided (``decision``: the event's payload) or ended (None)."""
    return {**empty(), **(summary or {}), "scale2": None if decision is None else dict(decision)}


def badge(summary: Mapping[str, Any] | None, admission_id: str, admitted_at: str
          ) -> dict[str, Any]:
    """What a bed's NEWS2 badge keeps of the stay ``admission_id`` (begun ``admitted_at``):
    the latest scored set's score and risk (None before the stay's first), when the next set
    is due (the stay's start before the first, as Observations due has it), whether the
    score waits for an escalation, and ``incomplete`` when the newest set of the stay is a
    partial one. Overdue is the reader's to work out on the clock."""
    summary = summary or {}
    scored = summary.get("scored")
    if not scored or scored.get("admissionId") != admission_id:
        scored = None
    last, began = _instant(summary.get("lastTakenAt")), _instant(admitted_at)
    this_stay = bool(last and began and last >= began)
    return {"score": scored["score"] if scored else None,
            "risk": scored["risk"] if scored else None,
            "takenAt": scored["takenAt"] if scored else None,
            "nextDueAt": scored["nextDueAt"] if scored else admitted_at,
            "notEscalated": needs_escalation(scored),
            "incomplete": this_stay and summary.get("lastComplete") is False}


def _instant(text: str | None) -> datetime | None:
    """A stored instant (UTC when it has no offset); None for nothing or not a time."""
    try:
        moment = datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def needs_escalation(scored: Mapping[str, Any] | None) -> bool:
    """A scored set of low-medium, medium or high risk nobody has been told of yet."""
    return bool(scored and scored.get("risk") in ESCALATE and not scored.get("escalation"))


def at_risk(scored: Mapping[str, Any] | None) -> bool:
    return bool(scored and scored.get("risk") in (Risk.LOW_MEDIUM, Risk.MEDIUM, Risk.HIGH))


def decision(reason: str, *, field: str = "reason") -> str:
    """A scale decision's reason, stripped; InvalidInput when it says nothing."""
    text = " ".join((reason or "").split())
    if len(text) < 3:
        raise InvalidInput("Say why (for example: hypercapnic respiratory failure, target "
                           "88–92 %).", field=field)
    if len(text) > 300:
        raise InvalidInput("Keep the reason to 300 characters.", field=field)
    return text


def escalation(told_whom: str, response: str, detail: str) -> dict[str, str]:
    """Who was told and their response, checked; InvalidInput naming the field."""
    whom = " ".join((told_whom or "").split())
    if not whom:
        raise InvalidInput("Say who was told (name and role).", field="told_whom")
    if len(whom) > 120:
        raise InvalidInput("Keep who was told to 120 characters.", field="told_whom")
    if response not in ESCALATION_RESPONSES:
        raise InvalidInput("Choose the response: " + ", ".join(ESCALATION_RESPONSES) + ".",
                           field="response")
    text = (detail or "").strip()
    if len(text) > 1000:
        raise InvalidInput("Keep the detail to 1000 characters.", field="detail")
    return {"toldWhom": whom, "response": response, "detail": text}
