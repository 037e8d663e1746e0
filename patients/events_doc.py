"""docs/events.md, generated from the code: ``python -m patients.events_doc > docs/events.md``.

Every event type of :class:`patients.domain.events.EventType`, with the JSON Schema of its
public form (:func:`patients.events_public.json_schema`) and an example made by the domain's
own event class (its ``payload()``, as stored) through :func:`~patients.events_public.
public_event`. A test keeps the committed document equal to this output.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from patients.domain import events as ev
from patients.domain.events import EVENT_LABELS, EventType
from patients.events_public import json_schema, public_event

PID = "7d0c1f9e-3b1a-4d2e-9f00-5a6b7c8d9e01"
OID = "ord-5b2e"
AT = "2026-11-25T14:00:00+00:00"
NURSE = "nurse.jones"
ADMINISTRATION = {"administrationId": "adm-1", "status": "given", "at": AT,
                  "administeredAt": AT, "scheduledFor": "2026-11-25T14:00:00+00:00",
                  "slotId": f"{OID}@202611251400", "dose": "1000", "unit": "mg",
                  "reason": None, "reasonDetail": None, "overrides": [], "override": None,
                  "by": NURSE, "note": ""}
ORDER = {"orderId": OID, "patientId": PID, "admissionId": "adm-9", "kind": "medication",
         "status": "placed", "urgency": "routine", "description": "Paracetamol 1000 mg PO Q6H",
         "departmentId": "MED", "wardId": "MED-1", "assigneeId": None, "assigneeName": None,
         "placedAt": AT, "placedBy": "dr.smith", "cancelReason": None, "administrations": [],
         "version": 1, "medicationCode": "PARA", "dose": "1000", "unit": "mg", "route": "PO",
         "frequency": "Q6H", "startAt": AT, "endAt": None, "overrides": []}

# One example per event type, as the domain makes it (the stored data, camelCase).
def _merge_example(step: EventType) -> dict[str, Any]:
    moves = step in (EventType.PATIENT_RECORDS_MERGED, EventType.PATIENT_RECORDS_RETURNED,
                     EventType.PATIENT_RECORDS_UNMERGED)
    return ev.MergeEvent(
        step=step, merge_id="5d3c2b1a-0f9e-4d8c-b7a6-958473625140", survivor_id=PID,
        survivor_mrn="000123", retired_id="9e8d7c6b-5a49-4382-a716-0f1e2d3c4b5a",
        retired_mrn="000987", reason="Registered twice: unconscious arrival as Unknown",
        copied={"allergies": ["al-1"], "admissions": ["adm-9"], "orders": ["ord-3"],
                "observations": [], "handovers": []} if moves else None,
        part=1 if moves else None, parts=1 if moves else None).payload()


EXAMPLES: dict[str, Callable[[], dict[str, Any]]] = {
    EventType.PATIENT_REGISTERED: lambda: ev.PatientRegistered(
        PID, "000123", "Ann", "Smith", "1955-02-02", "female").payload(),
    EventType.DEMOGRAPHICS_UPDATED: lambda: ev.DemographicsUpdated(
        {"familyName": "Smyth"}, {"familyName": "Smith"}).payload(),
    EventType.ALLERGY_ADDED: lambda: ev.AllergyAdded({
        "allergyId": "alg-1", "allergenCode": "PENICILLINS", "substance": "Penicillins",
        "checkable": True, "reaction": "rash", "severity": "mild", "criticality": "low",
        "status": "active", "recordedAt": AT, "recordedBy": "dr.smith"}).payload(),
    EventType.ALLERGY_REMOVED: lambda: ev.AllergyRemoved(
        "alg-1", "Penicillins", "entered-in-error").payload(),
    EventType.NO_KNOWN_ALLERGIES_RECORDED: lambda: ev.NoKnownAllergiesRecorded(
        AT, "dr.smith").payload(),
    EventType.ADMISSION_STARTED: lambda: ev.AdmissionStarted(
        "adm-9", "MED", "MED-1", "M104", "7", "Dr Smith", "Pneumonia", AT).payload(),
    EventType.PATIENT_TRANSFERRED: lambda: ev.PatientTransferred("adm-9", {
        "at": AT, "fromWard": "MED-1", "fromBed": "M104", "toWard": "MED-2", "toBed": "M201",
        "toDepartment": "MED", "by": "clerk"}).payload(),
    EventType.ADMISSION_ENDED: lambda: ev.AdmissionEnded(
        "adm-9", "home", AT, "MED-1", "M104", "Follow-up in two weeks.").payload(),
    EventType.MEDICATION_PRESCRIBED: lambda: ev.OrderPlaced("medication", ORDER).payload(),
    EventType.IMAGING_EXAM_REQUESTED: lambda: ev.OrderPlaced("imaging", {
        **{k: v for k, v in ORDER.items() if k not in ("medicationCode", "dose", "unit",
                                                        "route", "frequency", "startAt",
                                                        "endAt")},
        "kind": "imaging", "description": "Chest X-ray", "modality": "XR",
        "bodyPart": "chest"}).payload(),
    EventType.LAB_TEST_REQUESTED: lambda: ev.OrderPlaced("lab", {
        **{k: v for k, v in ORDER.items() if k not in ("medicationCode", "dose", "unit",
                                                        "route", "frequency", "startAt",
                                                        "endAt")},
        "kind": "lab", "description": "Full blood count", "testCode": "CBC"}).payload(),
    EventType.ORDER_READY: lambda: ev.OrderProgressed(
        EventType.ORDER_READY, OID, "ready").payload(),
    EventType.ORDER_STARTED: lambda: ev.OrderProgressed(
        EventType.ORDER_STARTED, OID, "in_progress").payload(),
    EventType.ORDER_COMPLETED: lambda: ev.OrderProgressed(
        EventType.ORDER_COMPLETED, OID, "completed", ended_at=AT).payload(),
    EventType.ORDER_CANCELLED: lambda: ev.OrderProgressed(
        EventType.ORDER_CANCELLED, OID, "cancelled", "duplicate", AT).payload(),
    EventType.ORDER_ASSIGNED: lambda: ev.OrderAssigned(OID, "12", "Nurse Jones").payload(),
    EventType.ORDER_UNASSIGNED: lambda: ev.OrderAssigned(OID, None, None).payload(),
    EventType.ORDER_REPAIRED: lambda: ev.OrderRepaired(OID, "startAt", "25/11", AT).payload(),
    EventType.MEDICATION_ADMINISTERED: lambda: ev.MedicationAdministered(
        OID, ADMINISTRATION).payload(),
    EventType.MEDICATION_NOT_GIVEN: lambda: ev.MedicationNotGiven(OID, {
        **ADMINISTRATION, "status": "not_given", "dose": None, "unit": None,
        "reason": "patient-refused", "reasonDetail": ""}).payload(),
    EventType.RESULTS_RECORDED: lambda: ev.ResultsRecorded(
        OID, "12", "lab", "Full blood count", {"abnormal": True, "high": [], "low": ["HGB"]},
        {"values": [{"analyte": "HGB", "name": "Haemoglobin", "value": 101, "text": "101",
                     "unit": "g_l", "unitName": "g/L", "low": 120, "high": 160, "flag": "L"}],
         "report": "", "resultedAt": AT, "resultedBy": NURSE}).payload(),
    EventType.RESULT_ACKNOWLEDGED: lambda: ev.ResultAcknowledged(
        OID, "12", AT, "dr.smith").payload(),
    EventType.REFERENCE_ENTRY_ADDED: lambda: ev.ReferenceEntrySaved(
        "Ward", "MED-3", {"code": "MED-3", "name": "Medicine 3", "active": True}).payload(),
    EventType.REFERENCE_ENTRY_CHANGED: lambda: ev.ReferenceEntrySaved(
        "Ward", "MED-3", {"code": "MED-3", "name": "Medicine 3", "active": False},
        {"code": "MED-3", "name": "Medicine 3", "active": True}).payload(),
    EventType.BED_CLEANED: lambda: ev.BedCleaned("MED-1", "M104", "adm-9", AT).payload(),
    EventType.NURSES_ASSIGNED: lambda: ev.NursesAssigned(
        "MED-1", "2026-11-25-day", {"M104": {"nurseId": "12", "nurseName": "Nurse Jones"}},
        {}).payload(),
    EventType.HANDOVER_WRITTEN: lambda: ev.HandoverWritten({
        "handoverId": "hov-1", "shift": "2026-11-25-day", "wardId": "MED-1", "bed": "M104",
        "situation": "Stable.", "background": "Pneumonia, day 3.", "assessment": "Improving.",
        "recommendation": "Oral antibiotics tomorrow.", "writtenAt": AT, "writtenBy": NURSE,
        "writtenByName": "Nurse Jones"}).payload(),
    EventType.HANDOVER_ACKNOWLEDGED: lambda: ev.HandoverAcknowledged(
        "hov-1", "2026-11-25-day", AT, "nurse.lee", "Nurse Lee").payload(),
    EventType.OBSERVATIONS_RECORDED: lambda: ev.ObservationsRecorded({
        "observationId": "20261125T140000000000-1a2b3c4d", "takenAt": AT,
        "respirationRate": 22, "spo2": 94, "onOxygen": False, "oxygenDevice": None,
        "oxygenFlowLitresPerMin": None, "systolicBp": 104, "diastolicBp": 62, "pulse": 112,
        "consciousness": "A", "temperature": 38.4, "painScore": 3, "comment": "",
        "flags": [], "news2": {"score": 7, "risk": "high", "parameterScores": {
            "respiration_rate": 2, "spo2": 1, "air_or_oxygen": 0, "systolic_bp": 1,
            "pulse": 2, "consciousness": 0, "temperature": 1}, "complete": True,
            "missing": [], "scale": 1, "nextDueAt": "2026-11-25T14:30:00+00:00"},
        "admissionId": "adm-9", "wardId": "MED-1", "bed": "M104", "confirmedBy": "scan",
        "recordedAt": AT, "recordedBy": "12", "recordedByName": "Nurse Jones"}).payload(),
    EventType.SPO2_SCALE2_DECIDED: lambda: ev.Spo2Scale2Decided(
        AT, "7", "Dr Smith", "Hypercapnic respiratory failure: target 88-92 %").payload(),
    EventType.SPO2_SCALE2_ENDED: lambda: ev.Spo2Scale2Ended(
        AT, "7", "Dr Smith", "CO2 retention resolved").payload(),
    EventType.OBSERVATIONS_ESCALATED: lambda: ev.ObservationsEscalated(
        "20261125T140000000000-1a2b3c4d", "Dr Patel (medical registrar)", AT,
        "critical-care", "Outreach team attending", "12", "Nurse Jones").payload(),
    **{step: functools.partial(_merge_example, step) for step in ev.MERGE_EVENTS},
    EventType.NOT_SAME_PERSON: lambda: ev.NotSamePerson(
        f"{PID}.9a1b2c3d-0e4f-4a5b-8c6d-7e8f9a0b1c2d",
        [{"patientId": PID, "mrn": "000123"},
         {"patientId": "9a1b2c3d-0e4f-4a5b-8c6d-7e8f9a0b1c2d", "mrn": "000456"}],
        ["Same birth date (2 February 1955) and sex (female)",
         "Similar names: SMITH, Ann and SMYTH, Ann"],
        "Twins: different NHS numbers on their GP letters").payload(),
}

_NOT_PATIENT = {EventType.REFERENCE_ENTRY_ADDED, EventType.REFERENCE_ENTRY_CHANGED,
                EventType.BED_CLEANED, EventType.NURSES_ASSIGNED, EventType.NOT_SAME_PERSON}


def example(event_type: str) -> dict[str, Any]:
    """The example of ``event_type`` in its public form."""
    stored = {"eventId": "0b8f7a52-6c1e-4f7b-9d3a-2e5c4b1a9f60", "stream": f"P_{PID}",
              "seq": 7, "type": event_type, "occurredAt": AT,
              "actor": {"id": "12", "username": NURSE, "display_name": "Nurse Jones",
                        "roles": ["nurse"]},
              "data": EXAMPLES[event_type]()}
    return public_event(stored, patient_id=None if event_type in _NOT_PATIENT else PID)


HEADER = """# Events

<!-- Generated by `python -m patients.events_doc > docs/events.md`; do not edit by hand. -->

Every change to a record is an event in its stream: a patient's (most), a ward's (beds,
nurses) or a reference type's. An event has one public form, made by
`patients.events_public.public_event` and nothing else: the webhook body
([webhooks.md](webhooks.md)), an item of the audit trail (`GET /api/v1/patients/{id}/events`),
the FHIR audit trail (`AuditEvent`, [fhir.md](fhir.md)) and the patient export all use it.

| field | what |
|---|---|
| `event_id` | unique; the same when delivered again |
| `type` | the event type (below) |
| `schema_version` | the version of the type's `data` shape; it rises when a field is renamed, removed or changes meaning (a new optional field keeps it) |
| `patient_id` | the patient whose stream holds it; `null` for a ward's or a reference type's |
| `seq` | its place in the stream, from 1, without gaps |
| `occurred_at` | when it was committed, ISO 8601 UTC |
| `actor` | who did it, as recorded then: `{id, username, display_name}` |
| `data` | what happened, snake_case at every depth (below, per type) |

Each type's `data` is what its domain event (`patients/domain/events.py`) stores, and its
schema is derived from that event's class: a field the domain gains is published only once
its public form is decided (`patients.events_public.PUBLIC`), and the test suite fails until
it is. A receiver ignores fields it does not know: types may gain optional fields within a version.
Values that name stored fields (`changed` of a reference change, `field` of an order repair)
are the stored names.
"""


def render() -> str:
    """The whole of docs/events.md."""
    parts = [HEADER, "## Event types\n"]
    types = [t for t in EventType]
    parts.append("| type | the audit trail says |\n|---|---|")
    parts.extend(f"| [`{t}`](#{str(t).lower()}) | {EVENT_LABELS.get(t, '')} |" for t in types)
    parts.append("")
    for t in types:
        kind = str(t)
        doc = (json_schema(kind)["properties"]["data"].get("description") or "").strip()
        parts.append(f"### {kind}\n")
        if doc:
            parts.append(" ".join(doc.split()) + "\n")
        parts.append("Example:\n\n```json\n" + json.dumps(example(kind), indent=2) + "\n```\n")
        parts.append("<details><summary>JSON Schema</summary>\n\n```json\n"
                     + json.dumps(json_schema(kind), indent=2) + "\n```\n\n</details>\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
