"""One line per audit event, for the chart and the order page: what changed, in words a clerk
can read, what it concerns (an order, an allergy, the stay) and who did it, by full name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cosmos_backend.store import DocumentStore
from hisadmin.core.local_time import human_time
from patients.domain.errors import InvalidInput
from patients.domain.events import EVENT_LABELS, MERGE_EVENTS, EventType
from patients.domain.observation_summary import ESCALATION_RESPONSES
from patients.domain.observations import RISK_LABELS
from patients.domain.records import (
    CRITICALITY_LABELS,
    DISPOSITION_LABELS,
    REMOVAL_LABELS,
    SEVERITY_LABELS,
    SEX_LABELS,
)
from patients.domain.shifts import SHIFT_LABELS, Shift
from patients.pages import labels
from patients.pages.labels import Names, label, label_override, order_usernames
from patients.pages.labels import label_administration as _dose

Data = dict[str, Any]
Line = Callable[[Data, Names], str]
# A discharge said as a sentence: "Discharged home" reads better than a label after a colon.
DISCHARGED_TO = {"home": "Discharged home", "care-home": "Discharged to a care home",
                 "transfer-other-facility": "Discharged to another facility",
                 "self-discharge": "Self-discharged"}


def _shift(name: str) -> str:
    """A handover's shift in words: "the day shift of Wed 25 Nov"."""
    try:
        shift = Shift.parse(name)
    except InvalidInput:  # a name no reader can parse: said without its day
        return "a shift"
    return f"the {SHIFT_LABELS[shift.kind].lower()} of {shift.day:%a} {shift.day.day} " \
           f"{shift.day:%b}"


def _bed(n: Names, ward: str | None, bed: str | None) -> str:
    return f"{n.of('Ward', ward) or '—'}{f' bed {bed}' if bed else ''}"


def _overrides(d: Data, n: Names) -> str:
    """The order checks a placed order overrode, each with its reason."""
    return "".join(
        f"; overrode the {o['check_label'].lower()} check: {o.get('reason')}"
        for o in (label_override(o, n) for o in d.get("overrides") or [])
    )


def _dose_time(d: Data) -> str:
    """The dose time an administration answers, and when it happened, in local time."""
    slot = human_time(d.get("scheduledFor"))
    when = human_time(d.get("administeredAt"))
    return (f" (dose due {slot})" if slot else "") + (
        f" at {when}" if when and d.get("status", "given") == "given" else ""
    )


def _allergy_added(d: Data, n: Names) -> str:
    said = ", ".join(
        x for x in (label(SEVERITY_LABELS, d.get("severity")).lower(), d.get("reaction")) if x
    )
    line = f"Allergy to {d.get('substance')} ({said})"
    if d.get("criticality") and d["criticality"] != "unable-to-assess":
        line += f", {label(CRITICALITY_LABELS, d['criticality']).lower()} criticality"
    if "checkable" in d and not d["checkable"]:
        line += "; free text, not checked against orders"
    return line


def _corrected(d: Data, n: Names) -> str:
    def said(key: str, value: Any) -> Any:
        return label(SEX_LABELS, value) if key == "sex" else value

    previous = d.get("previous") or {}
    return "Corrected " + ", ".join(
        f"{k.replace('_', ' ')}: {said(k, previous.get(k))} → {said(k, v)}"
        for k, v in d.items()
        if k != "previous"
    )


def _given(d: Data, n: Names) -> str:
    entry = _dose(d, n)
    line = f"Given {d.get('dose')} {entry['unit_name']}{_dose_time(d)}"
    if d.get("note"):
        line += f": {d['note']}"
    for o in entry["overrides_shown"]:  # each guard overridden, by whom and why
        line += f"; {o['check_label'].lower()} overridden by {o['by_name']}: {o.get('reason')}"
    return line


def _not_given(d: Data, n: Names) -> str:
    line = f"Dose not given{_dose_time(d)}: {_dose(d, n)['reason_label'].lower()}"
    return line + (f" ({d['reasonDetail']})" if d.get("reasonDetail") else "")


def _flags(d: Data, n: Names) -> str:
    """The analytes out of range, by name (the values recorded carry the names)."""
    flags = d.get("flags") or {}
    if d.get("kind") == "imaging":
        return "report written"
    named = {v.get("analyte"): v.get("name") for v in (d.get("results") or {}).get("values") or []}
    out = [f"{named.get(code) or code} high" for code in flags.get("high", [])]
    out += [f"{named.get(code) or code} low" for code in flags.get("low", [])]
    return ", ".join(out) if out else "all within range"


def _observations(d: Data) -> str:
    news2 = d.get("news2") or {}
    if not news2.get("complete"):
        return "Observations recorded (incomplete set, not scored)"
    return (f"Observations recorded: NEWS2 {news2.get('score')}, "
            f"{label(RISK_LABELS, news2.get('risk') or '').lower()} risk")


MOVED_WORDS = {"allergies": ("allergy", "allergies"), "admissions": ("stay", "stays"),
               "orders": ("order", "orders"), "observations": ("observation set",
                                                               "observation sets"),
               "handovers": ("handover note", "handover notes")}


def _merge_step(d: Data, n: Names) -> str:
    """Both MRNs, what the step moved (how many of each), and why."""
    copied = d.get("copied") or {}
    moved = ", ".join(f"{len(ids)} {MOVED_WORDS.get(kind, (kind, kind))[len(ids) > 1]}"
                      for kind, ids in copied.items() if ids)
    return (f"{d.get('retiredMrn')} into {d.get('survivorMrn')}"
            + (f"; moved {moved}" if moved else "")
            + (f" (part {d['part']} of {d['parts']})" if d.get("parts", 1) > 1 else "")
            + (f": {d['reason']}" if d.get("reason") else ""))


_LINES: dict[str, Line] = {
    **{step: _merge_step for step in MERGE_EVENTS},
    EventType.PATIENT_REGISTERED: lambda d, n: (
        f"Registered {d.get('familyName', '').upper()}, "
        f"{d.get('givenName', '')} with MRN {d.get('mrn')}"
    ),
    EventType.DEMOGRAPHICS_UPDATED: _corrected,
    EventType.ALLERGY_ADDED: _allergy_added,
    EventType.ALLERGY_REMOVED: lambda d, n: (
        f"Allergy to {d.get('substance')} removed"
        + (f": {label(REMOVAL_LABELS, d['reason']).lower()}" if d.get("reason") else "")
        + (f" ({d['detail']})" if d.get("detail") else "")
    ),
    EventType.NO_KNOWN_ALLERGIES_RECORDED: lambda d, n: (
        "No known allergies recorded (asked, none reported)"
    ),
    EventType.ADMISSION_STARTED: lambda d, n: (
        f"Admitted to "
        f"{n.of('Department', d.get('departmentId'))} / "
        f"{_bed(n, d.get('wardId'), d.get('bed'))}: {d.get('reason')}"
        + (f"; attending {d['attendingName']}" if d.get("attendingName") else "")
    ),
    EventType.PATIENT_TRANSFERRED: lambda d, n: (
        f"Moved {_bed(n, d.get('fromWard'), d.get('fromBed'))}"
        f" → {_bed(n, d.get('toWard'), d.get('toBed'))}"
    ),
    EventType.HANDOVER_WRITTEN: lambda d, n: (
        f"Handover for {_shift(d['shift'])} written"
        + (f" by {d['writtenByName']}" if d.get("writtenByName") else "")
    ),
    EventType.HANDOVER_ACKNOWLEDGED: lambda d, n: (
        f"Handover for {_shift(d['shift'])} acknowledged"
        + (f" by {d['acknowledgedByName']}" if d.get("acknowledgedByName") else "")
    ),
    EventType.OBSERVATIONS_RECORDED: lambda d, n: _observations(d),
    EventType.SPO2_SCALE2_DECIDED: lambda d, n: (
        f"SpO2 scale 2 (target 88–92 %) decided by {d.get('decidedByName')}: {d.get('reason')}"
    ),
    EventType.SPO2_SCALE2_ENDED: lambda d, n: (
        f"SpO2 scale 2 ended by {d.get('endedByName')}: {d.get('reason')}"
    ),
    EventType.OBSERVATIONS_ESCALATED: lambda d, n: (
        f"Score escalated to {d.get('toldWhom')}: "
        + label(ESCALATION_RESPONSES, d.get("response") or "").lower()
        + (f" ({d['detail']})" if d.get("detail") else "")
    ),
    EventType.ADMISSION_ENDED: lambda d, n: (
        (DISCHARGED_TO.get(d.get("disposition") or "")
         or "Discharged" + (f": {label(DISPOSITION_LABELS, d['disposition']).lower()}"
                            if d.get("disposition") else ""))
        + (f" ({d['note']})" if d.get("note") else "")
    ),
    EventType.MEDICATION_PRESCRIBED: lambda d, n: (
        f"Prescribed {d.get('description')}{_overrides(d, n)}"
    ),
    EventType.IMAGING_EXAM_REQUESTED: lambda d, n: (
        f"Requested {d.get('description')}{_overrides(d, n)}"
    ),
    EventType.LAB_TEST_REQUESTED: lambda d, n: (
        f"Requested {d.get('description')}{_overrides(d, n)}"
    ),
    EventType.ORDER_READY: lambda d, n: "Marked ready",
    EventType.ORDER_STARTED: lambda d, n: "Started",
    EventType.ORDER_COMPLETED: lambda d, n: "Completed",
    EventType.ORDER_CANCELLED: lambda d, n: f"Cancelled: {d.get('cancelReason')}",
    EventType.ORDER_ASSIGNED: lambda d, n: f"Assigned to {d.get('assigneeName')}",
    EventType.ORDER_UNASSIGNED: lambda d, n: "Unassigned",
    EventType.MEDICATION_ADMINISTERED: _given,
    EventType.MEDICATION_NOT_GIVEN: _not_given,
    EventType.RESULTS_RECORDED: lambda d, n: f"Results: {_flags(d, n)}",
    EventType.RESULT_ACKNOWLEDGED: lambda d, n: "Results reviewed",
}


def describe(event_type: str, data: Data, names: Names | None = None) -> str:
    """The event in words; "" for an event type (or an old shape) it cannot describe."""
    line = _LINES.get(event_type)
    if line is None:
        return ""
    try:
        return line(data, names or Names())
    except (AttributeError, TypeError, KeyError):  # an old event shape: show the type alone
        return ""


def concerns(
    data: Data, orders: Mapping[str, Mapping[str, Any]], allergies: Mapping[str, Mapping[str, Any]]
) -> dict[str, str] | None:
    """What an event is about: ``{"kind": "order", "order_id", "name"}`` (the order's
    description, from the order or the placing event) or ``{"kind": "allergy", "name"}``
    (the substance); None for an event about the patient or the stay."""
    order_id = data.get("orderId")
    if order_id:
        name = (orders.get(order_id) or {}).get("description") or data.get("description")
        return {"kind": "order", "order_id": str(order_id), "name": name or "an order"}
    allergy_id = data.get("allergyId")
    if allergy_id:
        name = (allergies.get(allergy_id) or {}).get("substance") or data.get("substance")
        return {"kind": "allergy", "name": f"Allergy to {name}" if name else "An allergy"}
    return None


def actor_usernames(events: Iterable[Mapping[str, Any]]) -> list[str]:
    return [(e.get("actor") or {}).get("username") or "" for e in events]


def label_event(
    event: dict[str, Any],
    names: Names,
    orders: Mapping[str, Mapping[str, Any]] | None = None,
    allergies: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Add ``label`` (the event's name), ``summary``, ``concerns`` and ``who`` (the actor's
    full name) to a stored event. Returns ``event``."""
    data = event.get("data") or {}
    actor = event.get("actor") or {}
    event["label"] = label(EVENT_LABELS, event.get("type"))
    event["summary"] = describe(event.get("type") or "", data, names)
    event["concerns"] = concerns(data, orders or {}, allergies or {})
    username = actor.get("username") or ""
    full = names.people.get(username)
    shown = actor.get("display_name") or ""
    # The stored name is the name at the time; a username stored for a user without a name
    # then is shown by the full name the user has now.
    event["who"] = full if full and shown in ("", username) else (shown or username)
    event["who_username"] = username
    return event


def label_chart(
    store: DocumentStore,
    chart: dict[str, Any],
    orders: list[dict[str, Any]],
    events: list[dict[str, Any]],
) -> None:
    """Words on a chart's parts, in place: its admissions, its orders (as
    :func:`patients.pages.labels.label_order`) and its audit events (:func:`label_event`).
    Reference names come from the cache; full names from one query of the users named."""
    patient = chart["patient"]
    recorded = [*(patient.get("allergies") or []), patient.get("noKnownAllergies") or {}]
    usernames = [
        *actor_usernames(events),
        *(u for o in orders for u in order_usernames(o)),
        *(a.get(k) for a in recorded for k in ("recordedBy", "removedBy")),
    ]
    names = labels.names(store, usernames)
    for entry in recorded:  # who recorded or removed an allergy, by full name
        for key in ("recordedBy", "removedBy"):
            if entry.get(key):
                entry[f"{key}Name"] = names.person(entry[key])
    for order in orders:
        labels.label_order(order, names)
    for admission in chart.get("admissions") or []:
        labels.label_admission(admission, names)
    patient["sex_label"] = labels.sex_label(patient.get("sex"))
    by_id = {o["orderId"]: o for o in orders}
    allergies = {a.get("allergyId"): a for a in patient.get("allergies") or []}
    for event in events:
        label_event(event, names, by_id, allergies)
