"""MedicationRequest and MedicationAdministration (medication orders and their doses), and
ServiceRequest (lab and imaging orders)."""

from __future__ import annotations

from typing import Any

from fhir.resources.R4B.medicationadministration import MedicationAdministration
from fhir.resources.R4B.medicationrequest import MedicationRequest
from fhir.resources.R4B.servicerequest import ServiceRequest

from fhir_facade import codes, ids
from fhir_facade.mapping.common import (
    Json,
    Names,
    coding,
    encounter_ref,
    local_concept,
    patient_ref,
    prune,
    quantity,
    ref,
    staff,
    text_or_none,
    when,
)
from patients.domain.mar import GIVEN, NOT_GIVEN_REASONS, data_errors
from patients.domain.orders import ACTIVE, OrderStatus

# Order status → MedicationRequest.status: a placed order is in force until it ends.
MEDICATION_REQUEST_STATUS = {
    **{s: "active" for s in ACTIVE},
    OrderStatus.COMPLETED: "completed",
    OrderStatus.CANCELLED: "cancelled",
}
# ServiceRequest has no "cancelled": a withdrawn request is "revoked".
SERVICE_REQUEST_STATUS = {
    **{s: "active" for s in ACTIVE},
    OrderStatus.COMPLETED: "completed",
    OrderStatus.CANCELLED: "revoked",
}
ADMINISTRATION_STATUS = {GIVEN: "completed", "not_given": "not-done"}


def medication_code(order: dict[str, Any], names: Names) -> Json | None:
    return local_concept(
        names, "Medication", order.get("medicationCode"), order.get("medicationName")
    )


def route(code: str | None, names: Names) -> Json | None:
    if not code:
        return None
    codings = [coding(codes.local_system("Route"), code, names.name("Route", code))]
    if code in codes.SNOMED_ROUTES:
        codings.insert(0, coding(codes.SNOMED, *codes.SNOMED_ROUTES[code]))
    return {"coding": codings, "text": names.name("Route", code)}


def _timing(order: dict[str, Any], names: Names) -> Json:
    hours = order.get("frequencyHours") or 0
    frequency = order.get("frequency")
    repeat: Json = (
        {"count": 1}
        if not hours and frequency
        else ({"frequency": 1, "period": hours, "periodUnit": "h"} if hours else {})
    )
    if order.get("startAt") or order.get("endAt"):
        repeat["boundsPeriod"] = {
            "start": when(order.get("startAt")),
            "end": when(order.get("endAt")),
        }
    return {"repeat": repeat or None, "code": local_concept(names, "Frequency", frequency)}


def medication_request(order: dict[str, Any], names: Names) -> MedicationRequest:
    pid = order["patientId"]
    cancelled = order["status"] == OrderStatus.CANCELLED
    return MedicationRequest(
        **prune(
            {
                "id": ids.pair(pid, order["orderId"]),
                "meta": {"versionId": str(order["version"])} if order.get("version") else None,
                "status": MEDICATION_REQUEST_STATUS.get(order["status"], "unknown"),
                "statusReason": {"text": order["cancelReason"]}
                if cancelled and order.get("cancelReason")
                else None,
                "intent": "order",
                "priority": order.get("urgency"),
                "medicationCodeableConcept": medication_code(order, names),
                "subject": patient_ref(pid),
                "encounter": encounter_ref(pid, order.get("admissionId")),
                "authoredOn": when(order.get("placedAt")),
                "requester": staff(order.get("placedBy")),
                # A stored time no reader can interpret is left out of the timing (when()
                # gives None) and named here, so a reader knows it is missing, not absent.
                "note": [{"text": f"{e['field']}: {e['message']}"} for e in data_errors(order)]
                or None,
                "dosageInstruction": [
                    {
                        "text": order.get("description"),
                        "timing": _timing(order, names),
                        "asNeededBoolean": bool(order.get("asNeeded")),
                        "route": route(order.get("route"), names),
                        "doseAndRate": [
                            {"doseQuantity": quantity(order.get("dose"), order.get("unit"), names)}
                        ],
                    }
                ],
            }
        )
    )


def administration(
    order: dict[str, Any], entry: dict[str, Any], names: Names
) -> MedicationAdministration:
    """One recorded dose of a medication order, given or not given (with the reason)."""
    pid = order["patientId"]
    status = entry.get("status") or GIVEN
    given = status == GIVEN
    reason = (
        None
        if given
        else text_or_none(
            NOT_GIVEN_REASONS.get(entry.get("reason") or "", entry.get("reason")),
            entry.get("reasonDetail"),
        )
    )
    return MedicationAdministration(
        **prune(
            {
                "id": ids.pair(pid, entry["administrationId"]),
                "status": ADMINISTRATION_STATUS.get(status, "unknown"),
                "statusReason": [{"text": reason}] if reason else None,
                "medicationCodeableConcept": medication_code(order, names),
                "subject": patient_ref(pid),
                "context": encounter_ref(pid, order.get("admissionId")),
                "effectiveDateTime": when(entry.get("administeredAt") or entry.get("at")),
                "performer": [{"actor": staff(entry.get("by"), entry.get("by"))}]
                if entry.get("by")
                else None,
                "request": ref("MedicationRequest", ids.pair(pid, order["orderId"])),
                "note": [{"text": entry["note"]}] if entry.get("note") else None,
                "dosage": {
                    "route": route(order.get("route"), names),
                    "dose": quantity(entry.get("dose"), entry.get("unit"), names),
                }
                if given
                else None,
            }
        )
    )


def administrations(order: dict[str, Any], names: Names) -> list[MedicationAdministration]:
    return [
        administration(order, e, names)
        for e in order.get("administrations") or []
        if e.get("administrationId")
    ]


def service_code(order: dict[str, Any], names: Names) -> Json | None:
    if order["kind"] == "lab":
        return local_concept(names, "LabTest", order.get("testCode"), order.get("testName"))
    return local_concept(names, "Modality", order.get("modality"), order.get("description"))


def service_request(order: dict[str, Any], names: Names) -> ServiceRequest:
    pid = order["patientId"]
    kind = order["kind"]
    cancelled = order["status"] == OrderStatus.CANCELLED
    part = order.get("bodyPart")
    return ServiceRequest(
        **prune(
            {
                "id": ids.pair(pid, order["orderId"]),
                "meta": {"versionId": str(order["version"])} if order.get("version") else None,
                "status": SERVICE_REQUEST_STATUS.get(order["status"], "unknown"),
                "intent": "order",
                "category": [
                    {
                        "coding": [coding(codes.SNOMED, *codes.SERVICE_CATEGORIES[kind])],
                        "text": codes.SERVICE_CATEGORIES[kind][1],
                    }
                ],
                "priority": order.get("urgency"),
                "code": service_code(order, names),
                "subject": patient_ref(pid),
                "encounter": encounter_ref(pid, order.get("admissionId")),
                "authoredOn": when(order.get("placedAt")),
                "requester": staff(order.get("placedBy")),
                "performer": [staff(order.get("assigneeId"), order.get("assigneeName"))]
                if order.get("assigneeId")
                else None,
                "bodySite": [local_concept(names, "BodyPart", part)] if part else None,
                "note": [{"text": f"Cancelled: {order['cancelReason']}"}]
                if cancelled and order.get("cancelReason")
                else None,
            }
        )
    )
