"""Observation (one per analyte of a lab result) and DiagnosticReport (a lab or imaging
result as a whole: its observations, or the imaging report text)."""

from __future__ import annotations

from typing import Any

from fhir.resources.R4B.diagnosticreport import DiagnosticReport
from fhir.resources.R4B.observation import Observation

from fhir_facade import codes, ids
from fhir_facade.mapping.common import (
    Json,
    Names,
    coding,
    encounter_ref,
    patient_ref,
    prune,
    quantity,
    ref,
    staff,
    when,
)
from fhir_facade.mapping.orders import service_code
from patients.domain.results import HIGH, LOW

ANALYTE = "Analyte"  # analyte codes: a code system of their own (they live in LabTest)


def _interpretation(value: dict[str, Any]) -> Json | None:
    flag = value.get("flag")
    if flag not in (HIGH, LOW):
        has_range = value.get("low") is not None or value.get("high") is not None
        flag = "N" if has_range else None
    if flag is None:
        return None
    return {"coding": [coding(codes.V3_INTERPRETATION, flag, codes.INTERPRETATIONS[flag])]}


# A laboratory's result status → the FHIR Observation/DiagnosticReport status.
FHIR_STATUS = {"preliminary": "preliminary", "final": "final", "corrected": "corrected"}


def _status(results: dict[str, Any]) -> str:
    return FHIR_STATUS.get(str(results.get("status") or "final"), "final")


def _value(value: dict[str, Any], unit: str | None, names: Names) -> Json | None:
    """The valueQuantity, with the laboratory's comparator ("<20") when it gave one."""
    measured = quantity(value.get("value"), unit, names)
    if measured is not None and value.get("comparator"):
        measured = {**measured, "comparator": value["comparator"]}
    return measured


def observation(order: dict[str, Any], index: int, names: Names) -> Observation:
    """The ``index``-th value of a lab order's result."""
    pid = order["patientId"]
    results = order["results"]
    value = results["values"][index]
    unit = value.get("unit")
    low, high = quantity(value.get("low"), unit, names), quantity(value.get("high"), unit, names)
    return Observation(
        **prune(
            {
                "id": ids.indexed(pid, order["orderId"], index),
                "basedOn": [ref("ServiceRequest", ids.pair(pid, order["orderId"]))],
                "status": _status(results),
                "category": [
                    {"coding": [coding(codes.OBSERVATION_CATEGORY, "laboratory", "Laboratory")]}
                ],
                "code": {
                    "coding": [
                        coding(codes.local_system(ANALYTE), value["analyte"], value.get("name"))
                    ],
                    "text": value.get("name") or value["analyte"],
                },
                "subject": patient_ref(pid),
                "encounter": encounter_ref(pid, order.get("admissionId")),
                "effectiveDateTime": when(value.get("observedAt") or results.get("observedAt")
                                          or results["resultedAt"]),
                "issued": when(results["resultedAt"]),
                "performer": [staff(results.get("resultedBy"), results.get("resultedByName"))],
                "valueQuantity": _value(value, unit, names),
                "interpretation": [_interpretation(value)],
                "referenceRange": [{"low": low, "high": high}] if low or high else None,
            }
        )
    )


def observations(order: dict[str, Any], names: Names) -> list[Observation]:
    """The observations of a resulted lab order (none for imaging or without results)."""
    if order.get("kind") != "lab" or not order.get("results"):
        return []
    return [observation(order, i, names) for i in range(len(order["results"]["values"]))]


def diagnostic_report(order: dict[str, Any], names: Names) -> DiagnosticReport:
    pid = order["patientId"]
    kind = order["kind"]
    results = order["results"]
    code = service_code(order, names) or {"text": order.get("description")}
    return DiagnosticReport(
        **prune(
            {
                "id": ids.pair(pid, order["orderId"]),
                "basedOn": [ref("ServiceRequest", ids.pair(pid, order["orderId"]))],
                "status": _status(results),
                "category": [{"coding": [coding(codes.V2_0074, *codes.REPORT_CATEGORIES[kind])]}],
                "code": code,
                "subject": patient_ref(pid),
                "encounter": encounter_ref(pid, order.get("admissionId")),
                "effectiveDateTime": when(results["resultedAt"]),
                "issued": when(results["resultedAt"]),
                "performer": [staff(results.get("resultedBy"), results.get("resultedByName"))],
                "result": [
                    ref("Observation", ids.indexed(pid, order["orderId"], i))
                    for i in range(len(results.get("values") or []))
                ],
                "conclusion": results.get("report") or None,
            }
        )
    )
