"""What every mapping shares: references, codings, staff, quantities, reference names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.utils import timezone

from fhir_facade import codes, ids
from patients.domain.mar import instant_text, parse_instant
from patients.domain.results import to_decimal

Json = dict[str, Any]


class Names:
    """Display names of reference codes, read from the reference cache on first use."""

    def __init__(self, entries: Callable[[str], Mapping[str, Mapping[str, Any]]]) -> None:
        self._entries = entries
        self._loaded: dict[str, Mapping[str, Mapping[str, Any]]] = {}

    def entry(self, type_name: str, code: str | None) -> Mapping[str, Any]:
        if not code:
            return {}
        if type_name not in self._loaded:
            self._loaded[type_name] = self._entries(type_name)
        return self._loaded[type_name].get(code) or {}

    def name(self, type_name: str, code: str | None) -> str | None:
        """The entry's name; the code itself for a code no longer in the reference data."""
        return self.entry(type_name, code).get("name") or code


def ref(resource_type: str, resource_id: str, display: str | None = None) -> Json:
    return {"reference": f"{resource_type}/{resource_id}", "display": display or None}


def patient_ref(patient_id: str) -> Json:
    return ref("Patient", patient_id)


def encounter_ref(patient_id: str, admission_id: str | None) -> Json | None:
    return ref("Encounter", ids.pair(patient_id, admission_id)) if admission_id else None


def coding(system: str, code: str, display: str | None = None) -> Json:
    return {"system": system, "code": code, "display": display or None}


def local_concept(
    names: Names, type_name: str, code: str | None, text: str | None = None
) -> Json | None:
    """A concept coded in the project's code system of ``type_name`` (text only: no code)."""
    if not code:
        return {"text": text} if text else None
    display = names.name(type_name, code)
    return {
        "coding": [coding(codes.local_system(type_name), code, display)],
        "text": text or display,
    }


def staff(user: str | None, display: str | None = None) -> Json | None:
    """A person of staff by their user id or username: no Practitioner resources are served,
    so a logical reference (identifier and name)."""
    if not user and not display:
        return None
    return {
        "identifier": {"system": codes.STAFF_SYSTEM, "value": str(user)} if user else None,
        "display": display or None,
    }


def quantity(value: Any, unit: str | None, names: Names) -> Json | None:
    """A Quantity in UCUM where the project's unit has a UCUM code, else the unit's name."""
    number = to_decimal(value)
    if number is None:
        return None
    if not unit:
        return {"value": number}
    if unit in codes.UCUM_UNITS:
        code, printed = codes.UCUM_UNITS[unit]
        return {"value": number, "unit": printed, "system": codes.UCUM, "code": code}
    return {"value": number, "unit": names.name("Unit", unit)}


def when(value: Any) -> str | None:
    """A stored time as a FHIR dateTime in UTC; a time kept without an offset is read in the
    site's time zone (as the MAR reads it). None for text that is not a time (an order's
    start is free text in the API): absent beats a resource that fails to validate."""
    if not value:
        return None
    try:
        return instant_text(parse_instant(str(value), timezone.get_current_timezone()))
    except (ValueError, TypeError, OverflowError):
        return None


def text_or_none(*parts: str | None, sep: str = ": ") -> str | None:
    words = [p.strip() for p in parts if p and p.strip()]
    return sep.join(words) or None


def prune(value: Any) -> Any:
    """Drop None values and empty lists or objects: FHIR has no nulls and no empty arrays."""
    if isinstance(value, dict):
        cleaned = {k: prune(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v not in (None, [], {})}
    if isinstance(value, list):
        items = [prune(v) for v in value]
        return [v for v in items if v not in (None, [], {})]
    return value
