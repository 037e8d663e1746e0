"""The rules coded reference data keeps, as plain checks on entries (dicts as stored).

A medication names its ingredients and drug classes as Allergen codes, its dose unit as a
Unit code and its routes as Route codes; a lab test names each analyte's unit as a Unit
code. These checks run on the shipped files before anything is loaded (one bad entry stops
the whole load) and on every admin edit.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from patients.domain.checks import HARD_LIMIT_FACTOR
from patients.domain.dose_times import parse_clock
from patients.domain.errors import InvalidInput
from patients.domain.shifts import hours_problem

ALLERGEN_KINDS = ("ingredient", "drug_class", "food", "environment", "other")
ALLERGEN_KIND_LABELS = {"ingredient": "Ingredient", "drug_class": "Drug class", "food": "Food",
                        "environment": "Environment", "other": "Other"}
BAD_CODE_CHARACTERS = "/\\?#"  # a code becomes a document id

# Which other types an entry's fields name: type → field → referenced type.
REFERENCES: dict[str, dict[str, str]] = {
    "Medication": {"ingredients": "Allergen", "classes": "Allergen", "routes": "Route",
                   "doseUnit": "Unit"},
    "LabTest": {"analytes.unit": "Unit"},
    "Ward": {"departmentId": "Department"},
}

Codes = Mapping[str, Collection[str]]  # type → the codes known for it


class InvalidReferenceEntry(InvalidInput):
    """An entry breaks a reference data rule; the message names type, code and field."""

    title = "Invalid reference data"

    def __init__(self, type_name: str, code: str, field: str, problem: str) -> None:
        super().__init__(f"{type_name} {code!r}, field {field!r}: {problem}", field=field)
        self.type_name, self.code = type_name, code


def _number(value: Any) -> Decimal | None:
    """A JSON number (not a bool, not a string) as a Decimal, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _codes(type_name: str, code: str, entry: Mapping[str, Any], name: str) -> list[str]:
    value = entry.get(name)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidReferenceEntry(type_name, code, name, "give a list of codes.")
    return value


def _positive(type_name: str, code: str, entry: Mapping[str, Any], name: str, *,
              zero: bool = False) -> Decimal:
    number = _number(entry.get(name))
    if number is None or number < 0 or (number == 0 and not zero):
        wanted = "a number, zero or more" if zero else "a number greater than zero"
        raise InvalidReferenceEntry(type_name, code, name, f"give {wanted}.")
    return number


def _an(word: str) -> str:
    return f"an {word}" if word[0] in "AEIO" else f"a {word}"


def _known(type_name: str, code: str, field: str, value: str, target: str,
           codes: Codes) -> None:
    if value not in codes.get(target, ()):
        raise InvalidReferenceEntry(type_name, code, field,
                                    f"{value!r} is not {_an(target)} code.")


def _medication(code: str, entry: Mapping[str, Any], codes: Codes) -> None:
    for name in ("ingredients", "classes", "routes"):
        target = REFERENCES["Medication"][name]
        for value in _codes("Medication", code, entry, name):
            _known("Medication", code, name, value, target, codes)
    if not entry["routes"]:
        raise InvalidReferenceEntry("Medication", code, "routes", "give at least one route.")
    unit = entry.get("doseUnit")
    if not isinstance(unit, str) or not unit:
        raise InvalidReferenceEntry("Medication", code, "doseUnit", "give a Unit code.")
    _known("Medication", code, "doseUnit", unit, "Unit", codes)
    single = _positive("Medication", code, entry, "maxSingleDose")
    daily = _positive("Medication", code, entry, "maxDailyDose")
    if single > daily:
        raise InvalidReferenceEntry("Medication", code, "maxDailyDose",
                                    "the daily maximum is below the single-dose maximum.")
    _hard_limits(code, entry, single, daily)
    if entry.get("prnMinIntervalHours") is not None:
        _positive("Medication", code, entry, "prnMinIntervalHours")
    if not str(entry.get("source") or "").strip():
        raise InvalidReferenceEntry("Medication", code, "source",
                                    "say where the dose limits come from.")


def _hard_limits(code: str, entry: Mapping[str, Any], single: Decimal, daily: Decimal) -> None:
    """The hard limits (optional; twice the maximum when not given) sit at or above the
    maximum they stop, and a single dose's below the daily one: no override passes them."""
    hard_single = hard_daily = None
    if entry.get("hardMaxSingleDose") is not None:
        hard_single = _positive("Medication", code, entry, "hardMaxSingleDose")
        if hard_single < single:
            raise InvalidReferenceEntry("Medication", code, "hardMaxSingleDose",
                                        "the hard limit is below the maximum single dose.")
    if entry.get("hardMaxDailyDose") is not None:
        hard_daily = _positive("Medication", code, entry, "hardMaxDailyDose")
        if hard_daily < daily:
            raise InvalidReferenceEntry("Medication", code, "hardMaxDailyDose",
                                        "the hard limit is below the maximum daily dose.")
    hard_single = hard_single or single * HARD_LIMIT_FACTOR
    if hard_single > (hard_daily or daily * HARD_LIMIT_FACTOR):
        raise InvalidReferenceEntry("Medication", code, "hardMaxDailyDose",
                                    "the hard daily limit is below the hard single-dose limit.")


def _frequency(code: str, entry: Mapping[str, Any]) -> None:
    """Exactly one kind of schedule: local ``times``, ``hours`` with an ``anchor`` clock time
    (whole minutes dividing a day), ``once``, ``prn`` or (older entries) ``hours`` alone."""
    if entry.get("hours") is not None:
        _positive("Frequency", code, entry, "hours", zero=True)
    for flag in ("once", "prn"):
        if flag in entry and not isinstance(entry[flag], bool):
            raise InvalidReferenceEntry("Frequency", code, flag, "give true or false.")
    kinds = [name for name in ("times", "anchor", "once", "prn") if entry.get(name)]
    if len(kinds) > 1:
        raise InvalidReferenceEntry("Frequency", code, kinds[1],
                                    f"give one of times, anchor, once or prn, not {kinds[0]} "
                                    f"and {kinds[1]}.")
    times = entry.get("times")
    if times is not None:
        if not isinstance(times, list) or not times:
            raise InvalidReferenceEntry("Frequency", code, "times",
                                        "give a list of local clock times HH:MM.")
        for value in times:
            try:
                parse_clock(value)
            except ValueError:
                raise InvalidReferenceEntry("Frequency", code, "times",
                                            f"{value!r} is not a clock time HH:MM.") from None
        if len(set(times)) != len(times):
            raise InvalidReferenceEntry("Frequency", code, "times", "a time is listed twice.")
    if entry.get("anchor"):
        try:
            parse_clock(entry["anchor"])
        except ValueError:
            raise InvalidReferenceEntry("Frequency", code, "anchor",
                                        "give the clock time HH:MM the doses count from."
                                        ) from None
        hours = _number(entry.get("hours"))
        minutes = hours * 60 if hours is not None else None
        if not minutes or minutes != minutes.to_integral_value() or 1440 % int(minutes):
            raise InvalidReferenceEntry("Frequency", code, "hours",
                                        "with an anchor, give hours that divide a day "
                                        "(1, 2, 3, 4, 6, 8, 12 or 24).")
    if entry.get("minIntervalHours") is not None:
        _positive("Frequency", code, entry, "minIntervalHours")


def _lab_test(code: str, entry: Mapping[str, Any], codes: Codes) -> None:
    analytes = entry.get("analytes")
    if not isinstance(analytes, list) or not analytes:
        raise InvalidReferenceEntry("LabTest", code, "analytes", "give at least one analyte.")
    seen: set[str] = set()
    for analyte in analytes:
        if not isinstance(analyte, Mapping):
            raise InvalidReferenceEntry("LabTest", code, "analytes", "each analyte is an object.")
        a_code = analyte.get("code")
        where = f"analytes.{a_code}" if a_code else "analytes"
        if not isinstance(a_code, str) or not a_code.strip():
            raise InvalidReferenceEntry("LabTest", code, where, "each analyte needs a code.")
        if a_code in seen:
            raise InvalidReferenceEntry("LabTest", code, where, "analyte codes must differ.")
        seen.add(a_code)
        if not str(analyte.get("name") or "").strip():
            raise InvalidReferenceEntry("LabTest", code, f"{where}.name", "give a name.")
        unit = analyte.get("unit")
        if not isinstance(unit, str) or unit not in codes.get("Unit", ()):
            raise InvalidReferenceEntry("LabTest", code, f"{where}.unit",
                                        f"{unit!r} is not a Unit code.")
        low, high = _number(analyte.get("low")), _number(analyte.get("high"))
        if low is None or high is None:
            raise InvalidReferenceEntry("LabTest", code, f"{where}.low",
                                        "give the reference range's low and high as numbers.")
        if low > high:
            raise InvalidReferenceEntry("LabTest", code, f"{where}.high",
                                        "the high end is below the low end.")


def _ward(code: str, entry: Mapping[str, Any], codes: Codes) -> None:
    department = entry.get("departmentId")
    if not isinstance(department, str) or not department:
        raise InvalidReferenceEntry("Ward", code, "departmentId", "give a Department code.")
    _known("Ward", code, "departmentId", department, "Department", codes)
    beds = entry.get("beds", [])
    if not isinstance(beds, list) or not all(isinstance(b, str) and b.strip() for b in beds):
        raise InvalidReferenceEntry("Ward", code, "beds", "give a list of bed codes.")
    twice = sorted({b for b in beds if beds.count(b) > 1})
    if twice:
        raise InvalidReferenceEntry("Ward", code, "beds",
                                    f"bed {', '.join(twice)} is listed twice.")
    bad = [b for b in beds if any(c in b for c in BAD_CODE_CHARACTERS)]
    if bad:
        raise InvalidReferenceEntry("Ward", code, "beds",
                                    f"bed {bad[0]!r}: a code may not contain / \\ ? or #.")
    hours = hours_problem(entry)
    if hours is not None:
        raise InvalidReferenceEntry("Ward", code, *hours)


def check_entry(type_name: str, entry: Mapping[str, Any], codes: Codes) -> None:
    """InvalidReferenceEntry when ``entry`` breaks a rule of its type; ``codes`` holds the
    codes of the types it may name (Allergen, Unit, Route)."""
    code = entry.get("code")
    if not isinstance(code, str) or not code.strip():
        raise InvalidReferenceEntry(type_name, str(code), "code", "give a code.")
    if any(c in code for c in BAD_CODE_CHARACTERS) or len(code) > 255:
        raise InvalidReferenceEntry(type_name, code, "code",
                                    "a code may not contain / \\ ? or #.")
    if not str(entry.get("name") or "").strip():
        raise InvalidReferenceEntry(type_name, code, "name", "give a name.")
    if type_name == "Allergen" and entry.get("kind") not in ALLERGEN_KINDS:
        raise InvalidReferenceEntry(type_name, code, "kind",
                                    f"give one of {', '.join(ALLERGEN_KINDS)}.")
    if type_name == "Unit":
        if not str(entry.get("dimension") or "").strip():
            raise InvalidReferenceEntry(type_name, code, "dimension",
                                        "give a dimension (mass, volume, …).")
        _positive(type_name, code, entry, "factor")
    if type_name == "Frequency":
        _frequency(code, entry)
    if type_name == "Medication":
        _medication(code, entry, codes)
    if type_name == "LabTest":
        _lab_test(code, entry, codes)
    if type_name == "Ward":
        _ward(code, entry, codes)


def check_all(entries: Iterable[tuple[str, Mapping[str, Any]]],
              known: Codes | None = None) -> None:
    """Check a whole set of reference data (files): every entry by its type's rules, codes
    unique per type, and references resolved within the set — or, for the types the set
    does not hold, against ``known`` (what is stored)."""
    listed = list(entries)
    codes: dict[str, set[str]] = {}
    given = {type_name for type_name, _ in listed}
    for type_name, held in (known or {}).items():
        if type_name not in given:
            codes[type_name] = set(held)
    for type_name, entry in listed:
        code = entry.get("code")
        if isinstance(code, str) and code in codes.get(type_name, set()):
            raise InvalidReferenceEntry(type_name, code, "code", "the code appears twice.")
        codes.setdefault(type_name, set()).add(code if isinstance(code, str) else "")
    for type_name, entry in listed:
        check_entry(type_name, entry, codes)
