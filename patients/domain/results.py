"""Results of lab and imaging orders: values per analyte with flags, and report texts.

A lab result is one numeric value for each analyte of the order's test, kept in the analyte's
unit (a value given in another unit of the same dimension is converted), flagged ``H`` above
the analyte's ``high``, ``L`` below its ``low``, else not flagged (the range edges are normal).
An imaging result is a report text. Plain Python: no Django, no store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from patients.domain.errors import InvalidInput, UnitMismatch
from patients.domain.units import convert

MAX_REPORT = 10_000  # characters
RESULT_KINDS = ("lab", "imaging")  # the order kinds that complete with results
HIGH, LOW = "H", "L"
FLAG_LABELS = {HIGH: "High", LOW: "Low"}
FLAG_WORDS = {HIGH: "high", LOW: "low"}


# A lab result's status, as the laboratory reports it (HL7 OBX-11 P, F, C).
PRELIMINARY, FINAL, CORRECTED = "preliminary", "final", "corrected"
RESULT_STATUSES = (PRELIMINARY, FINAL, CORRECTED)
STATUS_LABELS = {PRELIMINARY: "Preliminary", FINAL: "Final", CORRECTED: "Corrected"}
COMPARATORS = ("<=", ">=", "<", ">")  # a value beyond what the method measures: "<20"


@dataclass(frozen=True)
class GivenValue:
    """One value as entered: the analyte's code, the number, its unit (None: the analyte's).
    What a laboratory sends beside it is kept as sent: ``comparator`` (``<20``: below what
    the method measures), its own reference range and flags (next to ours, never instead),
    when it was observed, and its comments."""

    analyte_code: str
    value: Decimal
    unit: str | None = None
    comparator: str = ""
    lab_range: str = ""
    lab_flags: tuple[str, ...] = ()
    observed_at: str = ""  # ISO 8601
    comments: tuple[str, ...] = ()


def split_comparator(text: str) -> tuple[str, str]:
    """``("<", "20")`` for ``"<20"``; ``("", text)`` without a comparator."""
    text = str(text or "").strip()
    for comparator in COMPARATORS:
        if text.startswith(comparator):
            return comparator, text[len(comparator):].strip()
    return "", text


def to_decimal(value: Any) -> Decimal | None:
    """A finite number from a number or its text, or None (empty, not a number)."""
    if value is None or value == "":
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def flag(value: Decimal, low: Any, high: Any) -> str | None:
    """``H`` above ``high``, ``L`` below ``low``, None within the range (edges included)."""
    upper, lower = to_decimal(high), to_decimal(low)
    if upper is not None and value > upper:
        return HIGH
    if lower is not None and value < lower:
        return LOW
    return None


def _number(value: Decimal) -> int | float:
    """A JSON number for a decimal: an int when whole, else a float (at most 6 decimals)."""
    value = value.quantize(Decimal("0.000001")).normalize()
    return int(value) if value == value.to_integral_value() else float(value)


def _text(value: Decimal, *, converted: bool) -> str:
    """The value as written, to the precision it was measured at ("5.0" stays "5.0"), at
    most 6 decimals as the number keeps; a converted value with its trailing zeros dropped
    (they mean nothing there)."""
    exponent = value.as_tuple().exponent
    if converted or (isinstance(exponent, int) and exponent < -6):
        value = value.quantize(Decimal("0.000001")).normalize()
    return format(value, "f")


def value_text(v: Mapping[str, Any]) -> str:
    """A stored value's number as text: its ``text`` (the measured precision) when kept,
    else the JSON number (results stored before the text was kept)."""
    text = v.get("text")
    if text:
        return str(text)
    number = to_decimal(v.get("value"))
    return "" if number is None else format(number, "f")


def in_words(v: Mapping[str, Any]) -> str:
    """A stored value as a clinician reads it: "Sodium 128 mmol/L, low" (no flag: "Potassium
    4.1 mmol/L")."""
    name = v.get("name") or v.get("analyte") or ""
    unit = v.get("unitName") or v.get("unit") or ""
    words = " ".join(x for x in (name, value_text(v), unit) if x)
    flagged = FLAG_WORDS.get(v.get("flag") or "")
    return f"{words}, {flagged}" if flagged else words


def abnormal_in_words(values: Iterable[Mapping[str, Any]]) -> list[str]:
    """The flagged values of a result in words, high ones first, each in test order."""
    values = list(values)
    return [in_words(v) for flag_ in (HIGH, LOW) for v in values if v.get("flag") == flag_]


def lab_values(analytes: Iterable[Mapping[str, Any]], given: Iterable[GivenValue],
               units: Mapping[str, Mapping[str, Any]], *, partial: bool = False
               ) -> list[dict[str, Any]]:
    """The stored values of a lab result, in the test's analyte order.

    ``analytes``: the LabTest entry's ``[{code, name, unit, low, high}]``; ``units``: Unit
    entries by code. Every analyte needs exactly one value; an unknown analyte, a duplicate, a
    missing value or a unit of another dimension is an InvalidInput (422) on
    ``results.<analyte code>`` (a missing value names every analyte still missing).
    """
    expected = {a["code"]: a for a in analytes}
    entered: dict[str, GivenValue] = {}
    for g in given:
        code = (g.analyte_code or "").strip()
        if code not in expected:
            raise InvalidInput(f"This test has no analyte {code!r}; its analytes are "
                               f"{', '.join(expected)}.", field=f"results.{code}")
        if code in entered:
            raise InvalidInput(f"{expected[code]['name']} is given twice.",
                               field=f"results.{code}")
        entered[code] = g
    missing = [code for code in expected if code not in entered]
    if missing and not partial:
        names = ", ".join(expected[c].get("name", c) for c in missing)
        raise InvalidInput(f"Give a value for each analyte; missing: {names}.",
                           field=f"results.{missing[0]}")
    values = []
    for code, analyte in expected.items():
        if code not in entered:
            continue  # a preliminary result may lack analytes still being measured
        g = entered[code]
        value, converted = to_decimal(g.value), False
        if value is None:
            raise InvalidInput(f"The value of {analyte['name']} must be a number.",
                               field=f"results.{code}")
        unit_code = analyte.get("unit")
        if g.unit and g.unit != unit_code:
            source, target = units.get(g.unit), units.get(unit_code or "")
            if source is None:
                raise InvalidInput(f"Unknown unit {g.unit!r} for {analyte['name']}.",
                                   field=f"results.{code}.unit")
            try:
                value = convert(value, source, target or {"code": unit_code})
                converted = True
            except UnitMismatch as exc:
                raise UnitMismatch(f"{analyte['name']}: {exc}",
                                   field=f"results.{code}.unit") from exc
        extra: dict[str, Any] = {}
        if g.comparator:
            extra["comparator"] = g.comparator
        if g.lab_range:
            extra["labRange"] = g.lab_range
        if g.lab_flags:
            extra["labFlags"] = list(g.lab_flags)
        if g.observed_at:
            extra["observedAt"] = g.observed_at
        if g.comments:
            extra["comments"] = list(g.comments)
        values.append({"analyte": code, "name": analyte.get("name", code),
                       "value": _number(value),
                       "text": g.comparator + _text(value, converted=converted), **extra,
                       "unit": unit_code,
                       "unitName": (units.get(unit_code or "") or {}).get("name", unit_code),
                       "low": analyte.get("low"), "high": analyte.get("high"),
                       "flag": bounded_flag(g.comparator, value, analyte.get("low"),
                                            analyte.get("high"))})
    return values


def bounded_flag(comparator: str, value: Decimal, low: Any, high: Any) -> str | None:
    """The flag of a value, or of a bound (``<20``: the value is below 20): a bound is
    flagged only where every value it admits would be (``<20`` under a range from 30 is
    low; under a range up to 10 nothing is certain)."""
    if not comparator:
        return flag(value, low, high)
    upper, lower = to_decimal(high), to_decimal(low)
    if comparator.startswith("<"):
        return LOW if lower is not None and value <= lower else None
    return HIGH if upper is not None and value >= upper else None


def imaging_report(text: str | None) -> str:
    """The report as stored: non-empty, at most ``MAX_REPORT`` characters (422 on ``report``)."""
    report = (text or "").strip()
    if not report:
        raise InvalidInput("Write the report to complete an imaging exam.", field="report")
    if len(report) > MAX_REPORT:
        raise InvalidInput(f"The report is {len(report)} characters long; at most "
                           f"{MAX_REPORT} are kept.", field="report")
    return report


def flags_summary(values: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{abnormal, high: [analyte codes], low: [analyte codes]}`` of a result's values."""
    values = list(values)
    high = [v["analyte"] for v in values if v.get("flag") == HIGH]
    low = [v["analyte"] for v in values if v.get("flag") == LOW]
    return {"abnormal": bool(high or low), "high": high, "low": low}


def resulted(orders: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The lab and imaging orders among ``orders`` (as stored) that have results, newest
    result first."""
    done = [o for o in orders if o.get("kind") in RESULT_KINDS and o.get("results")]
    return sorted(done, key=lambda o: o["results"]["resultedAt"], reverse=True)
