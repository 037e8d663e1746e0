"""Observation for vital signs (the FHIR R4 vital-signs profile: category ``vital-signs``,
LOINC codes, UCUM units) from an observation set, and the set's NEWS2 total as an
Observation (SNOMED CT 1104051000000101) ``derivedFrom`` the values it scored."""

from __future__ import annotations

from typing import Any

from fhir.resources.R4B.observation import Observation

from fhir_facade import codes, ids
from fhir_facade.mapping.common import Json, coding, encounter_ref, patient_ref, prune, staff, when

LOINC = "http://loinc.org"
NEWS2_CODE = ("1104051000000101", "Royal College of Physicians NEWS2 total score")
# index → (stored field, LOINC code, display, UCUM code); the BP panel is index 3.
VALUES: dict[int, tuple[str, str, str, str]] = {
    0: ("respirationRate", "9279-1", "Respiratory rate", "/min"),
    1: ("pulse", "8867-4", "Heart rate", "/min"),
    2: ("spo2", "59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry", "%"),
    4: ("temperature", "8310-5", "Body temperature", "Cel"),
    5: ("oxygenFlowLitresPerMin", "3151-8", "Inhaled oxygen flow rate", "L/min"),
}
BP, NEWS2 = 3, 9
BP_PARTS = (("systolicBp", "8480-6", "Systolic blood pressure"),
            ("diastolicBp", "8462-4", "Diastolic blood pressure"))


def _quantity(value: Any, unit: str) -> Json:
    return {"value": value, "unit": unit, "system": codes.UCUM, "code": unit}


def _concept(code: str, display: str, system: str = LOINC) -> Json:
    return {"coding": [coding(system, code, display)], "text": display}


def _base(o: dict[str, Any], pid: str, index: int, category: str, label: str) -> Json:
    return {
        "id": ids.vital(pid, o["observationId"], index), "status": "final",
        "category": [{"coding": [coding(codes.OBSERVATION_CATEGORY, category, label)]}],
        "subject": patient_ref(pid), "encounter": encounter_ref(pid, o.get("admissionId")),
        "effectiveDateTime": when(o["takenAt"]), "issued": when(o.get("recordedAt")),
        "performer": [staff(o.get("recordedBy"), o.get("recordedByName"))],
    }


def indexes(o: dict[str, Any]) -> list[int]:
    """The indexes of the set's resources: each value present, the BP panel, the score."""
    found = [i for i, (name, *_) in VALUES.items() if o.get(name) is not None]
    if o.get("systolicBp") is not None:
        found.append(BP)
    if (o.get("news2") or {}).get("complete"):
        found.append(NEWS2)
    return sorted(found)


def observation(pid: str, o: dict[str, Any], index: int) -> Observation | None:
    """The ``index``-th resource of set ``o`` (None when the set has no such value)."""
    if index not in indexes(o):
        return None
    base = _base(o, pid, index, "vital-signs", "Vital Signs")
    if index in VALUES:
        name, code, display, unit = VALUES[index]
        body = {**base, "code": _concept(code, display),
                "valueQuantity": _quantity(o[name], unit)}
    elif index == BP:
        body = {**base, "code": _concept("85354-9", "Blood pressure panel"),
                "component": [{"code": _concept(code, display),
                               "valueQuantity": _quantity(o[name], "mm[Hg]")}
                              for name, code, display in BP_PARTS if o.get(name) is not None]}
    else:
        news2 = o["news2"]
        body = {**_base(o, pid, index, "survey", "Survey"),
                "code": _concept(*NEWS2_CODE, system=codes.SNOMED),
                "valueInteger": news2["score"],
                "interpretation": [{"text": f"{news2['risk']} clinical risk"}],
                "derivedFrom": [{"reference": f"Observation/{ids.vital(pid, o['observationId'], i)}"}
                                for i in indexes(o) if i != NEWS2]}
    return Observation(**prune(body))


def observations(pid: str, o: dict[str, Any]) -> list[Observation]:
    return [r for i in indexes(o) if (r := observation(pid, o, i)) is not None]
