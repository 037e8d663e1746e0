"""Observation sets and the National Early Warning Score 2 (Royal College of Physicians,
2017), pure.

:func:`checked` refuses what cannot be a measurement of a living patient (naming the field)
and flags what is possible but extreme; :func:`news2` scores a set, parameter by parameter,
from the published chart. A partial set is recorded but has no total: NEWS2 needs all seven
parameters. Scale 2 for SpO2 applies only when the caller says a clinician's decision is in
force (:mod:`patients.use_cases.observations` reads it from the record). Plain Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from patients.domain.errors import InvalidInput


class Risk(StrEnum):
    LOW = "low"
    LOW_MEDIUM = "low-medium"
    MEDIUM = "medium"
    HIGH = "high"


RISK_LABELS = {Risk.LOW: "Low", Risk.LOW_MEDIUM: "Low–medium (a single 3)",
               Risk.MEDIUM: "Medium", Risk.HIGH: "High"}
# The clinical response to each risk (RCP NEWS2 chart 2), as the chart and worklists say it.
RESPONSES = {
    Risk.LOW: "Registered nurse assesses; observations at least 4–6-hourly (12-hourly at 0).",
    Risk.LOW_MEDIUM: "Urgent review by a ward clinician; observations at least hourly.",
    Risk.MEDIUM: "Urgent review by a clinician competent in acute illness; observations at "
                 "least hourly.",
    Risk.HIGH: "Emergency assessment by a critical-care-competent team; continuous "
               "monitoring.",
}
ESCALATE = frozenset({Risk.LOW_MEDIUM, Risk.MEDIUM, Risk.HIGH})  # "not escalated" until told

CONSCIOUSNESS = {"A": "Alert", "C": "New confusion", "V": "Voice", "P": "Pain",
                 "U": "Unresponsive"}
# The paper chart's order; the seven scored parameters (air or oxygen from ``on_oxygen``).
SCORED = ("respiration_rate", "spo2", "air_or_oxygen", "systolic_bp", "pulse",
          "consciousness", "temperature")
FIELDS = ("respiration_rate", "spo2", "on_oxygen", "oxygen_device", "oxygen_flow_l_min",
          "systolic_bp", "diastolic_bp", "pulse", "consciousness", "temperature",
          "pain_score", "comment")
# Each field's stored (camelCase) name; the public event form turns it back to snake_case
# (``oxygenFlowLitresPerMin`` → ``oxygen_flow_litres_per_min``).
STORED = {name: name.split("_")[0] + "".join(p.capitalize() for p in name.split("_")[1:])
          for name in FIELDS} | {"oxygen_flow_l_min": "oxygenFlowLitresPerMin"}
LABELS = {"respiration_rate": "Respiration rate", "spo2": "SpO2",
          "air_or_oxygen": "Air or oxygen", "on_oxygen": "Air or oxygen",
          "oxygen_device": "Oxygen device", "oxygen_flow_l_min": "Oxygen flow",
          "systolic_bp": "Systolic BP", "diastolic_bp": "Diastolic BP", "pulse": "Pulse",
          "consciousness": "Consciousness", "temperature": "Temperature",
          "pain_score": "Pain score", "comment": "Comment"}
UNITS = {"respiration_rate": "/min", "spo2": "%", "oxygen_flow_l_min": "L/min",
         "systolic_bp": "mmHg", "diastolic_bp": "mmHg", "pulse": "/min", "temperature": "°C",
         "pain_score": "/10"}
OXYGEN_DEVICES = {"nasal": "Nasal cannula", "simple-mask": "Simple face mask",
                  "venturi": "Venturi mask", "non-rebreather": "Non-rebreather mask",
                  "high-flow": "High-flow nasal", "niv": "NIV / CPAP", "other": "Other"}
MAX_COMMENT = 500
# The LOINC code of each measured field (the FHIR vital-signs profile's; REFERENCE), and the
# UCUM units a value may come in: what the HL7 listener reads from a monitor's OBX and what
# the FHIR facade's Observations carry and are searched by.
LOINC = {"respiration_rate": "9279-1", "pulse": "8867-4", "spo2": "59408-5",
         "systolic_bp": "8480-6", "diastolic_bp": "8462-4", "temperature": "8310-5",
         "oxygen_flow_l_min": "3151-8"}
VITAL_SIGNS_PANEL = "85353-1"
BP_PANEL = "85354-9"
UCUM = {"respiration_rate": ("/min", "{breaths}/min"), "pulse": ("/min", "{beats}/min"),
        "spo2": ("%",), "systolic_bp": ("mm[Hg]",), "diastolic_bp": ("mm[Hg]",),
        "temperature": ("Cel",), "oxygen_flow_l_min": ("L/min",)}

# field → (lowest possible, highest possible, extreme below, extreme above). Outside the
# first pair no living patient's value; outside the second a real but alarming one, kept
# and flagged so the reader checks it was not mistyped.
LIMITS: dict[str, tuple[Decimal, Decimal, Decimal, Decimal]] = {
    name: (Decimal(lo), Decimal(hi), Decimal(xlo), Decimal(xhi))
    for name, (lo, hi, xlo, xhi) in {
        "respiration_rate": ("0", "80", "6", "40"),
        "spo2": ("20", "100", "80", "100"),
        "oxygen_flow_l_min": ("0", "70", "0", "15"),
        "systolic_bp": ("30", "300", "70", "250"),
        "diastolic_bp": ("10", "200", "30", "140"),
        "pulse": ("20", "300", "35", "180"),
        "temperature": ("25.0", "45.0", "32.0", "41.0"),
        "pain_score": ("0", "10", "0", "10"),
    }.items()}
WHOLE = frozenset({"respiration_rate", "spo2", "systolic_bp", "diastolic_bp", "pulse",
                   "pain_score"})
TENTH = Decimal("0.1")

# Next set due, from the score (Open eObs' schedule; local policy may tighten it).
INTERVALS = {"zero": timedelta(hours=12), Risk.LOW: timedelta(hours=4),
             Risk.LOW_MEDIUM: timedelta(hours=1), Risk.MEDIUM: timedelta(hours=1),
             Risk.HIGH: timedelta(minutes=30)}


def _number(name: str, value: Any) -> Decimal:
    if isinstance(value, bool):
        raise InvalidInput(f"{LABELS[name]} is a number.", field=name)
    try:
        number = Decimal(str(value).strip().replace(",", "."))
    except InvalidOperation:
        raise InvalidInput(f"{LABELS[name]} is a number.", field=name) from None
    if not number.is_finite():
        raise InvalidInput(f"{LABELS[name]} is a number.", field=name)
    if name in WHOLE and number != number.to_integral_value():
        raise InvalidInput(f"{LABELS[name]} is a whole number.", field=name)
    lo, hi, _, _ = LIMITS[name]
    if not lo <= number <= hi:
        unit = UNITS.get(name, "")
        raise InvalidInput(f"{LABELS[name]} of {number} {unit} is not possible: check the "
                           f"reading (between {lo} and {hi} {unit}).".replace(" %", "%"),
                           field=name)
    return number.quantize(TENTH, ROUND_HALF_UP) if name not in WHOLE else number


def checked(values: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The set's values in their stored form (whole numbers as int, temperature and flow to
    one decimal as float; absent ones None) and the extreme values' flags
    (``{field, message}``). InvalidInput (422, naming the field) for an impossible value,
    systolic not above diastolic, oxygen details on air, or an empty set."""
    out: dict[str, Any] = {name: None for name in FIELDS}
    flags: list[dict[str, str]] = []
    for name, limits in LIMITS.items():
        raw = values.get(name)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        number = _number(name, raw)
        out[name] = int(number) if name in WHOLE else float(number)
        _, _, xlo, xhi = limits
        if not xlo <= number <= xhi:
            flags.append({"field": name, "message": f"{LABELS[name]} {number} "
                          f"{UNITS.get(name, '')} is extreme: check it and act on it."})
    code = str(values.get("consciousness") or "").strip().upper()
    if code and code not in CONSCIOUSNESS:
        raise InvalidInput("Consciousness is one of A, C, V, P or U (ACVPU).",
                           field="consciousness")
    out["consciousness"] = code or None
    on_oxygen = values.get("on_oxygen")
    out["on_oxygen"] = None if on_oxygen is None else bool(on_oxygen)
    device = str(values.get("oxygen_device") or "").strip() or None
    if device is not None and device not in OXYGEN_DEVICES:
        raise InvalidInput("Choose the oxygen device from the list.", field="oxygen_device")
    if out["on_oxygen"] is not True and (device or out["oxygen_flow_l_min"]):
        raise InvalidInput("An oxygen device or flow is given only for a patient on oxygen.",
                           field="on_oxygen")
    out["oxygen_device"] = device
    if (out["systolic_bp"] is not None and out["diastolic_bp"] is not None
            and out["systolic_bp"] <= out["diastolic_bp"]):
        raise InvalidInput("Systolic BP must be above diastolic BP: check the reading.",
                           field="systolic_bp")
    comment = str(values.get("comment") or "").strip()
    if len(comment) > MAX_COMMENT:
        raise InvalidInput(f"Keep the comment to {MAX_COMMENT} characters.", field="comment")
    out["comment"] = comment
    if all(out[n] in (None, "") for n in FIELDS):
        raise InvalidInput("Record at least one observation.", field="respiration_rate")
    return out, flags


def _band(value: Decimal, bands: tuple[tuple[str, int], ...]) -> int:
    """The score of the first band whose upper bound (inclusive) holds ``value``."""
    for upper, points in bands:
        if upper == "inf" or value <= Decimal(upper):
            return points
    raise AssertionError("bands end at infinity")


RR = (("8", 3), ("11", 1), ("20", 0), ("24", 2), ("inf", 3))
SPO2_1 = (("91", 3), ("93", 2), ("95", 1), ("inf", 0))
SPO2_2_LOW = (("83", 3), ("85", 2), ("87", 1), ("92", 0))
SPO2_2_OXYGEN = (("94", 1), ("96", 2), ("inf", 3))
SYSTOLIC = (("90", 3), ("100", 2), ("110", 1), ("219", 0), ("inf", 3))
PULSE = (("40", 3), ("50", 1), ("90", 0), ("110", 1), ("130", 2), ("inf", 3))
TEMPERATURE = (("35.0", 3), ("36.0", 1), ("38.0", 0), ("39.0", 1), ("inf", 2))


def spo2_score(spo2: int, *, scale: int, on_oxygen: bool) -> int:
    value = Decimal(spo2)
    if scale == 1:
        return _band(value, SPO2_1)
    if value <= 92:
        return _band(value, SPO2_2_LOW)
    return _band(value, SPO2_2_OXYGEN) if on_oxygen else 0


def parameter_scores(values: Mapping[str, Any], *, scale: int = 1) -> dict[str, int]:
    """Each parameter present in ``values`` (as :func:`checked` stores them) with its score.
    SpO2 on scale 2 needs to know air or oxygen; without it SpO2 is not scored."""
    out: dict[str, int] = {}
    if values.get("respiration_rate") is not None:
        out["respiration_rate"] = _band(Decimal(values["respiration_rate"]), RR)
    on_oxygen = values.get("on_oxygen")
    if values.get("spo2") is not None and (scale == 1 or on_oxygen is not None):
        out["spo2"] = spo2_score(values["spo2"], scale=scale, on_oxygen=bool(on_oxygen))
    if on_oxygen is not None:
        out["air_or_oxygen"] = 2 if on_oxygen else 0
    if values.get("systolic_bp") is not None:
        out["systolic_bp"] = _band(Decimal(values["systolic_bp"]), SYSTOLIC)
    if values.get("pulse") is not None:
        out["pulse"] = _band(Decimal(values["pulse"]), PULSE)
    if values.get("consciousness"):
        out["consciousness"] = 0 if values["consciousness"] == "A" else 3
    if values.get("temperature") is not None:
        temperature = Decimal(str(values["temperature"])).quantize(TENTH, ROUND_HALF_UP)
        out["temperature"] = _band(temperature, TEMPERATURE)
    return out


@dataclass(frozen=True)
class News2:
    """A set's score: ``score`` and ``risk`` are None for an incomplete set (``missing``
    names what it lacks); ``next_due_at`` is None then too."""

    parameter_scores: dict[str, int]
    scale: int
    score: int | None
    risk: Risk | None
    missing: tuple[str, ...] = ()
    next_due_at: datetime | None = None
    flags: list[dict[str, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing

    def as_json(self) -> dict[str, Any]:
        return {"score": self.score, "risk": None if self.risk is None else str(self.risk),
                "parameterScores": dict(self.parameter_scores), "complete": self.complete,
                "missing": list(self.missing), "scale": self.scale,
                "nextDueAt": None if self.next_due_at is None else self.next_due_at.isoformat()}


def risk_of(total: int, scores: Mapping[str, int]) -> Risk:
    if total >= 7:
        return Risk.HIGH
    if total >= 5:
        return Risk.MEDIUM
    if 3 in scores.values():
        return Risk.LOW_MEDIUM
    return Risk.LOW


def next_due(taken_at: datetime, total: int, risk: Risk) -> datetime:
    return taken_at + INTERVALS["zero" if total == 0 else risk]


def news2(values: Mapping[str, Any], *, scale: int = 1,
          taken_at: datetime | None = None) -> News2:
    """The set's NEWS2 on SpO2 ``scale`` (1, or 2 under a clinician's decision)."""
    if scale not in (1, 2):
        raise InvalidInput("The SpO2 scale is 1 or 2.", field="scale")
    scores = parameter_scores(values, scale=scale)
    missing = tuple(p for p in SCORED if p not in scores)
    if missing:
        return News2(scores, scale, None, None, missing)
    total = sum(scores.values())
    risk = risk_of(total, scores)
    due = None if taken_at is None else next_due(taken_at, total, risk)
    return News2(scores, scale, total, risk, (), due)
