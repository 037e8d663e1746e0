"""A patient's whole record as one Bundle: ``Patient/{id}/$everything`` and ``export_patient``.

The Bundle holds the Patient, then every Encounter (admissions), AllergyIntolerance,
MedicationRequest, MedicationAdministration, ServiceRequest, Observation and DiagnosticReport
of the patient, each mapped as the facade's reads map it, and then the audit trail: one
AuditEvent per event of the patient's stream, oldest first (who did what, when, to which
part of the record). It is a ``searchset`` (what FHIR's ``$everything`` returns): the Patient
is the ``match``, the rest ``include``. Everything is read from the patient's partition.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhir.resources.R4B.auditevent import AuditEvent
from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.resource import Resource

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from fhir_facade import codes, ids, reads
from fhir_facade.mapping import people
from fhir_facade.mapping.common import Json, coding, patient_ref, prune, ref, staff
from patients.domain.events import EVENT_LABELS, EventType
from patients.domain.results import RESULT_KINDS
from patients.events_public import public_event
from patients.pages.audit import describe
from patients.pages.labels import Names as Words
from patients.pages.labels import names as words_for
from patients.persistence import queries

# DICOM's audit event id for a change to a patient's record; the subtype names the event.
RECORD_EVENT = coding("http://dicom.nema.org/resources/ontology/DCM", "110110", "Patient Record")
EVENT_SYSTEM = f"{codes.BASE}/CodeSystem/event-type"
OBJECT_ROLE = "http://terminology.hl7.org/CodeSystem/object-role"
SOURCE = {"observer": {"display": "Hospital back office"}}
# Events that create a part of the record ("C"); every other event changes one ("U").
CREATES = frozenset(
    {
        EventType.PATIENT_REGISTERED,
        EventType.ALLERGY_ADDED,
        EventType.NO_KNOWN_ALLERGIES_RECORDED,
        EventType.ADMISSION_STARTED,
        EventType.MEDICATION_PRESCRIBED,
        EventType.IMAGING_EXAM_REQUESTED,
        EventType.LAB_TEST_REQUESTED,
        EventType.MEDICATION_ADMINISTERED,
        EventType.MEDICATION_NOT_GIVEN,
        EventType.RESULTS_RECORDED,
    }
)


def everything(store: DocumentStore, patient_id: str, *, base: str | None = None) -> Bundle:
    """The patient's whole record; FhirError 404 for an unknown patient. ``base`` (the
    server's FHIR base URL) gives each entry its ``fullUrl``; audit events, which are not
    served one by one, are named by ``urn:uuid:``."""
    view = reads.patient_view(store, patient_id)
    if view is None:
        raise reads.not_found("Patient", patient_id)
    names = reads.names_of(store)
    record: list[Resource] = [
        people.patient(view),
        *reads.encounters(store, patient_id, names),
        *people.allergies(view, names),
        *reads.medication_requests(store, patient_id, names),
        *reads.administration_list(store, patient_id, names),
        *reads.service_requests(store, patient_id, names),
        *reads.observation_list(store, patient_id, names),
        *reads.report_list(store, patient_id, names),
    ]
    trail = audit_trail(store, patient_id)
    entries = [_entry(r, base, "match" if i == 0 else "include") for i, r in enumerate(record)]
    entries += [
        {"fullUrl": f"urn:uuid:{event_id}", "resource": event, "search": {"mode": "include"}}
        for event_id, event in trail
    ]
    return Bundle(
        type="searchset",
        total=len(entries),
        entry=entries,
        timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
        link=[
            {
                "relation": "self",
                "url": f"{base or ''}/Patient/{patient_id}/$everything".lstrip("/"),
            }
        ],
    )


def _entry(resource: Resource, base: str | None, mode: str) -> Json:
    entry: Json = {"resource": resource, "search": {"mode": mode}}
    if base:
        entry["fullUrl"] = f"{base}/{resource.get_resource_type()}/{resource.id}"
    return entry


# ------------------------------------------------------------------ the audit trail
def audit_trail(store: DocumentStore, patient_id: str) -> list[tuple[str, AuditEvent]]:
    """(event id, AuditEvent) for every event of the patient's stream, oldest first."""
    events: list[dict[str, Any]] = []
    continuation = None
    while True:
        page, continuation = queries.events(
            store, patient_id, page_size=200, continuation=continuation
        )
        events.extend(page)
        if not continuation:
            break
    try:
        kinds = {o["orderId"]: o["kind"] for o in queries.orders(store, patient_id)}
    except errors.InvalidRequest:
        kinds = {}
    events.sort(key=lambda e: int(e.get("seq") or 0))
    # The words the chart's audit trail shows: reference codes by name, staff by full name.
    words = words_for(store, [(e.get("actor") or {}).get("username") for e in events])
    return [(str(e["eventId"]), audit_event(patient_id, e, kinds, words)) for e in events]


def audit_event(
    patient_id: str, event: dict[str, Any], order_kinds: dict[str, str], words: Words | None = None
) -> AuditEvent:
    """One stored event of the record as an AuditEvent, mapped from its public form
    (:func:`~patients.events_public.public_event`): the event type as subtype, who (the actor
    as recorded then), when, and the parts of the record it concerns. The summary is the
    chart's audit line for it."""
    public = public_event(event, patient_id=patient_id)
    kind, data, actor = public["type"], public["data"], public["actor"]
    label = EVENT_LABELS.get(kind)  # type: ignore[call-overload]  # a StrEnum key is its str
    summary = describe(kind, event.get("data") or {}, words) or None
    entities = [
        {
            "what": patient_ref(patient_id),
            "role": coding(OBJECT_ROLE, "1", "Patient"),
            "description": summary,
        }
    ]
    concerned = _concerned(patient_id, data, order_kinds)
    if concerned is not None:
        entities.append({"what": concerned, "role": coding(OBJECT_ROLE, "4", "Domain Resource")})
    return AuditEvent(
        **prune(
            {
                "id": ids.pair(patient_id, str(public["event_id"])),
                "type": RECORD_EVENT,
                "subtype": [coding(EVENT_SYSTEM, kind, label or kind)],
                "action": "C" if kind in CREATES else "U",
                "recorded": public["occurred_at"],
                "outcome": "0",
                "agent": [
                    {
                        "who": staff(actor["id"], actor["display_name"] or actor["username"]),
                        "name": actor["display_name"] or actor["username"],
                        "requestor": True,
                    }
                ],
                "source": SOURCE,
                "entity": entities,
            }
        )
    )


def _concerned(patient_id: str, data: dict[str, Any], order_kinds: dict[str, str]) -> Json | None:
    """The resource an event is about beyond the patient (an order, an allergy, a stay);
    ``data``: the event's public data."""
    try:
        if data.get("order_id"):
            kind = order_kinds.get(str(data["order_id"]))
            resource_type = "ServiceRequest" if kind in RESULT_KINDS else "MedicationRequest"
            return ref(resource_type, ids.pair(patient_id, str(data["order_id"])))
        if data.get("allergy_id"):
            return ref("AllergyIntolerance", ids.pair(patient_id, str(data["allergy_id"])))
        if data.get("admission_id"):
            return ref("Encounter", ids.pair(patient_id, str(data["admission_id"])))
    except ids.NotOurs:
        return None
    return None
