"""A bedside monitor's ORU^R01 group as an observation set's values: each OBX-3 a vital
sign's LOINC code (:data:`patients.domain.observations.LOINC`), OBX-5 its number, OBX-6 its
UCUM unit (or none), OBX-18 the monitor; OBR-7 (else the first OBX-14) when it was taken;
the NTE as the set's comment. A Refusal names the field otherwise. Pure: the domain's own
checks (impossible values) run in the use case, their field mapped back by :func:`location`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from decimal import Decimal, InvalidOperation
from typing import Any

from hl7v2.inbound.mapping import NUMERIC_TYPES, observed_at
from hl7v2.inbound.oru import (
    APPLICATION_ERROR,
    DATA_TYPE_ERROR,
    DUPLICATE_KEY,
    REQUIRED_FIELD_MISSING,
    TABLE_VALUE_NOT_FOUND,
    UNKNOWN_KEY,
    OrderResult,
    Refusal,
)
from patients.domain.observations import LABELS, LOINC, UCUM

FIELD_OF = {code: name for name, code in LOINC.items()}
STATUSES = ("F", "R", "")  # OBX-11: final, or not yet verified (a monitor's reading)


@dataclass(frozen=True)
class VitalSigns:
    """``values`` by the API's names; ``taken_at`` ISO 8601 ("" : now); ``devices`` the
    OBX-18 monitors; ``positions`` the OBX that gave each field."""

    values: dict[str, Any]
    taken_at: str
    devices: tuple[str, ...]
    positions: dict[str, int]


def _number(text: str) -> Decimal | None:
    try:
        number = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def vital_signs(group: OrderResult, time_zone: tzinfo | None = None) -> VitalSigns:
    """The group's set, every OBX read; a Refusal at the first that cannot be."""
    values: dict[str, Any] = {}
    positions: dict[str, int] = {}
    for ob in group.observations:
        if ob.status not in STATUSES:
            raise Refusal(ob.location(11), TABLE_VALUE_NOT_FOUND,
                          f"OBX-11 {ob.status!r} is not recorded here: send F (final) or R.")
        if not ob.code:
            raise Refusal(ob.location(3), REQUIRED_FIELD_MISSING, "OBX-3 names no vital sign.")
        name = FIELD_OF.get(ob.code)
        if name is None:
            raise Refusal(ob.location(3), UNKNOWN_KEY,
                          f"{ob.code!r} is not a vital sign taken here; the LOINC codes are "
                          f"{', '.join(LOINC.values())}.")
        if name in positions:
            raise Refusal(ob.location(3), DUPLICATE_KEY, f"{LABELS[name]} is given twice.")
        number = _number(ob.value)
        if ob.value_type not in NUMERIC_TYPES or number is None:
            raise Refusal(ob.location(5) if ob.value_type in NUMERIC_TYPES else ob.location(2),
                          DATA_TYPE_ERROR, f"{LABELS[name]} must be a number (OBX-2 NM).")
        if ob.unit and ob.unit not in UCUM[name]:
            raise Refusal(ob.location(6), TABLE_VALUE_NOT_FOUND,
                          f"{LABELS[name]} is taken in {' or '.join(UCUM[name])} (UCUM), not "
                          f"{ob.unit!r}.")
        positions[name] = ob.position
        if name == "oxygen_flow_l_min":  # a flow of 0: the patient breathes air
            values["on_oxygen"] = number > 0
            if number > 0:
                values[name] = str(number)
            positions["on_oxygen"] = ob.position
        else:
            values[name] = str(number)
    notes = [*group.comments, *(c for ob in group.observations for c in ob.comments)]
    if notes:
        values["comment"] = " ".join(notes)
    sent = group.observed_at or next((ob.observed_at for ob in group.observations
                                      if ob.observed_at), "")
    taken_at = observed_at(sent, time_zone)
    if sent and not taken_at:
        raise Refusal(group.location(7), DATA_TYPE_ERROR,
                      "OBR-7 (or OBX-14) is not an HL7 date and time.")
    devices = tuple(dict.fromkeys(ob.equipment for ob in group.observations if ob.equipment))
    return VitalSigns(values, taken_at, devices, positions)


def location(field: str | None, group: OrderResult, signs: VitalSigns) -> tuple[str, str]:
    """ERR-2 and ERR-3 for the domain's refusal of ``field``: the OBX that gave it (OBX-5),
    the time (OBR-7), the notes (NTE)."""
    if field in signs.positions:
        return f"OBX^{signs.positions[field]}^5", APPLICATION_ERROR
    if field == "comment":
        return "NTE", APPLICATION_ERROR
    return group.location(7), APPLICATION_ERROR
