"""An ORU's observations as the results form's values: OBX-3 → the order's analyte, OBX-5 →
the number (with its comparator: ``<20``), OBX-6 → a Unit code (converted later by the
results use case), OBX-7/8/14 and the NTE kept as the laboratory sent them, OBX-11 → the
result's status (P preliminary, F final, C corrected). Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, tzinfo
from typing import Any

from hl7v2.inbound.oru import (
    DATA_TYPE_ERROR,
    DUPLICATE_KEY,
    REQUIRED_FIELD_MISSING,
    TABLE_VALUE_NOT_FOUND,
    UNKNOWN_KEY,
    Observation,
    Refusal,
)
from patients.domain.results import (
    CORRECTED,
    FINAL,
    PRELIMINARY,
    GivenValue,
    split_comparator,
    to_decimal,
)

# UCUM codes laboratories write in OBX-6, for the Unit entries whose code and name differ.
UCUM_UNITS = {
    "g/L": "g_l", "mg/L": "mg_l", "ng/L": "ng_l", "mmol/L": "mmol_l", "umol/L": "umol_l",
    "10*9/L": "x10e9_l", "mmol/mol": "mmol_mol", "{ratio}": "ratio", "{INR}": "ratio",
    "1": "ratio", "mg": "mg", "g": "g", "ug": "mcg", "mL": "ml", "L": "l",
}
NUMERIC_TYPES = ("NM", "SN", "")  # OBX-2: a number (an engine may leave the type out)
OBX_STATUSES = {"F": FINAL, "": FINAL, "P": PRELIMINARY, "C": CORRECTED}  # OBX-11


def status_of(observations: Iterable[Observation]) -> str:
    """The result's status from its OBX-11: corrected when one is C, else preliminary when
    one is P, else final."""
    statuses = {OBX_STATUSES.get(ob.status, FINAL) for ob in observations}
    return CORRECTED if CORRECTED in statuses else (
        PRELIMINARY if PRELIMINARY in statuses else FINAL)


def unit_code(written: str, units: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The Unit code for OBX-6.1 as written: a Unit code, a Unit name (µmol/L) or a UCUM
    code (umol/L); None when none of them fits."""
    if written in units:
        return written
    folded = written.casefold()
    for code, unit in units.items():
        if str(unit.get("name") or "").casefold() == folded:
            return code
    ucum = UCUM_UNITS.get(written) or next(
        (code for text, code in UCUM_UNITS.items() if text.casefold() == folded), None)
    return ucum if ucum in units else None


def observed_at(text: str, time_zone: tzinfo | None = None) -> str:
    """An HL7 DTM (``YYYYMMDD[HHMM[SS[.S…]]][±ZZZZ]``) as ISO 8601, its fraction of a second
    kept; without an offset it is in ``time_zone`` (the hospital's); "" when empty or not a
    time."""
    text = text.strip()
    if not text:
        return ""
    zone = ""
    for sign in "+-":
        if sign in text[8:]:
            cut = text.rindex(sign)
            text, zone = text[:cut], text[cut:]
    digits, _, fraction = text.partition(".")
    try:
        moment = datetime.strptime(digits.ljust(14, "0")[:14], "%Y%m%d%H%M%S")
        if fraction:  # fractions of a second, kept (to the microsecond)
            moment = moment.replace(microsecond=int(fraction[:6].ljust(6, "0")))
        if zone:
            moment = moment.replace(tzinfo=datetime.strptime(zone, "%z").tzinfo)
        elif time_zone is not None:
            moment = moment.replace(tzinfo=time_zone)
    except ValueError:
        return ""
    return moment.isoformat()


def given_values(observations: Iterable[Observation], analytes: Iterable[Mapping[str, Any]],
                 units: Mapping[str, Mapping[str, Any]], *, partial: bool = False,
                 time_zone: tzinfo | None = None) -> tuple[GivenValue, ...]:
    """One value per OBX for the order's test (``analytes``: LabTest's ``[{code, name, unit}]``);
    a Refusal naming the OBX field (or ``OBR^1^4`` for an analyte no OBX gives) otherwise."""
    names = {a["code"]: a.get("name", a["code"]) for a in analytes}
    given: dict[str, GivenValue] = {}
    for ob in observations:
        if ob.status not in OBX_STATUSES:
            raise Refusal(ob.location(11), TABLE_VALUE_NOT_FOUND,
                          f"OBX-11 {ob.status!r} is not recorded here: send P (preliminary), "
                          "F (final) or C (corrected).")
        if not ob.code:
            raise Refusal(ob.location(3), REQUIRED_FIELD_MISSING, "OBX-3 names no analyte.")
        if ob.code not in names:
            raise Refusal(ob.location(3), UNKNOWN_KEY,
                          f"The order's test has no analyte {ob.code!r}; its analytes are "
                          f"{', '.join(names)}.")
        if ob.code in given:
            raise Refusal(ob.location(3), DUPLICATE_KEY, f"{names[ob.code]} is given twice.")
        comparator, written = split_comparator(ob.value)
        number = to_decimal(written)
        if ob.value_type not in NUMERIC_TYPES or number is None:
            raise Refusal(ob.location(5) if ob.value_type in NUMERIC_TYPES else ob.location(2),
                          DATA_TYPE_ERROR, f"{names[ob.code]} must be a number (OBX-2 NM).")
        unit = unit_code(ob.unit, units) if ob.unit else None
        if ob.unit and unit is None:
            raise Refusal(ob.location(6), TABLE_VALUE_NOT_FOUND,
                          f"Unknown unit {ob.unit!r} for {names[ob.code]}.")
        given[ob.code] = GivenValue(ob.code, number, unit, comparator=comparator,
                                    lab_range=ob.ref_range, lab_flags=ob.abnormal_flags,
                                    observed_at=observed_at(ob.observed_at, time_zone),
                                    comments=ob.comments)
    missing = [name for code, name in names.items() if code not in given]
    if missing and not partial:
        raise Refusal("OBR^1^4", REQUIRED_FIELD_MISSING,
                      f"Every analyte of the test needs a result; missing: {', '.join(missing)}.")
    return tuple(given.values())
