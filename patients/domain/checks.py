"""Order checks: allergy, dose and duplicate, run before an order is placed.

Pure: the caller hands in the reference entries (medication, units, frequency), the
patient's allergies and the admission's active orders; :func:`check_order` returns every
check that failed, as :class:`Conflict` values in a fixed order (allergy, dose, duplicate),
at most one per check type. Whether a conflict refuses the order is the use case's call:
each one needs its own override reason (:func:`unresolved`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from patients.domain.errors import InvalidInput
from patients.domain.orders import Order
from patients.domain.units import convert, doses_per_day

ALLERGY_CONFLICT = "allergy-conflict"
DOSE_LIMIT = "dose-limit"
DUPLICATE_ORDER = "duplicate-order"
PRN_INTERVAL = "prn-interval"  # checked when a PRN dose is recorded, overridden the same way
# Every check type, in the order a refusal reports them (the first names the problem type).
CHECK_TYPES = (ALLERGY_CONFLICT, DOSE_LIMIT, DUPLICATE_ORDER, PRN_INTERVAL)
CHECK_LABELS = {ALLERGY_CONFLICT: "Allergy", DOSE_LIMIT: "Dose limit",
                DUPLICATE_ORDER: "Duplicate order", PRN_INTERVAL: "PRN interval"}

Entry = Mapping[str, Any]


@dataclass(frozen=True)
class Conflict:
    type: str  # one of CHECK_TYPES
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"type": self.type, "detail": self.detail}


# ------------------------------------------------------------------ allergy
def _words(text: str) -> list[str]:
    """Case- and accent-insensitive words; a trailing plural ``s`` does not count."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text or "")
                    if not unicodedata.combining(c)).casefold()
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w
            for w in re.split(r"[^0-9a-z]+", plain) if w]


def names_in_text(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (its words, in a row, as whole words)."""
    hay, needle = _words(text), _words(name)
    if not needle:
        return False
    return any(hay[i:i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))


def _active(allergy: Entry) -> bool:
    return allergy.get("status", "active") == "active"


def _allergy_words(allergy: Entry) -> str:
    reaction = (allergy.get("reaction") or "").strip()
    severity = (allergy.get("severity") or "").strip()
    said = ", ".join(x for x in (reaction or "reaction not recorded", severity) if x)
    return f"{allergy.get('substance') or allergy.get('allergenCode')} ({said})"


def allergy_conflict(medication: Entry, allergies: Iterable[Entry],
                     allergen_names: Mapping[str, str] | None = None) -> Conflict | None:
    """Active allergies the medication meets: a coded allergen among its ingredients or
    classes, or a free-text (not checkable) allergy naming the drug, an ingredient or a class.
    """
    names = allergen_names or {}
    ingredients = list(medication.get("ingredients") or [])
    classes = list(medication.get("classes") or [])
    codes = set(ingredients) | set(classes)
    drug = medication.get("name") or medication.get("code") or ""
    found: list[str] = []
    for allergy in allergies:
        if not _active(allergy):
            continue
        code = allergy.get("allergenCode")
        if allergy.get("checkable") and code:
            if code in codes:
                how = "contains" if code in ingredients else "belongs to"
                found.append(f"{_allergy_words(allergy)}: {drug} {how} "
                             f"{names.get(code, allergy.get('substance') or code)}")
            continue
        text = allergy.get("substance") or ""
        named = [n for n in (drug, *(names.get(c, c) for c in (*ingredients, *classes)))
                 if n and names_in_text(text, n)]
        if named:
            found.append(f"{_allergy_words(allergy)}, recorded as free text, names {named[0]}")
    if not found:
        return None
    return Conflict(ALLERGY_CONFLICT, f"Allergy recorded: {'; '.join(found)}.")


# ------------------------------------------------------------------ dose
def _amount(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def dose_conflict(medication: Entry, dose: Decimal, unit: Entry, dose_unit: Entry | None,
                  frequency: Entry | None) -> Conflict | None:
    """A dose above the medication's single or daily maximum, in its dose unit.

    A unit of another dimension than the dose unit raises ``UnitMismatch`` (422): that is a
    wrong order, not a warning one can override.
    """
    if dose_unit is None:
        return None  # a medication without a coded dose unit has no limits to check
    amount = convert(dose, unit, dose_unit)
    code = dose_unit.get("code", "")
    drug = medication.get("name") or medication.get("code")
    given = f"{_amount(dose)} {unit.get('code', '')}"
    same = unit.get("code") == code
    found: list[str] = []
    single = medication.get("maxSingleDose")
    if single is not None and amount > Decimal(str(single)):
        found.append(f"a single dose of {given}{'' if same else f' ({_amount(amount)} {code})'}"
                     f" is above the maximum single dose of {_amount(Decimal(str(single)))} "
                     f"{code} for {drug}")
    daily = medication.get("maxDailyDose")
    if daily is not None and frequency is not None:
        per_day = doses_per_day(frequency)
        total = amount * per_day
        if total > Decimal(str(daily)):
            found.append(f"{_amount(amount)} {code} × {_amount(per_day)} a day "
                         f"({frequency.get('code', '')}) = {_amount(total)} {code} is above the "
                         f"maximum daily dose of {_amount(Decimal(str(daily)))} {code} for {drug}")
    if not found:
        return None
    text = "; ".join(found)
    return Conflict(DOSE_LIMIT, text[0].upper() + text[1:] + ".")


# ------------------------------------------------------------------ duplicate
def _same(kind: str, details: Entry, order: Order) -> bool:
    if order.kind != kind:
        return False
    other = order.details
    if kind == "medication":
        return bool(details.get("medicationCode")) and \
            other.get("medicationCode") == details.get("medicationCode")
    if kind == "lab":
        return bool(details.get("testCode")) and other.get("testCode") == details.get("testCode")
    if kind == "imaging":
        return bool(details.get("modality")) and (other.get("modality"), other.get("bodyPart")) \
            == (details.get("modality"), details.get("bodyPart"))
    return False


def duplicate_conflict(kind: str, details: Entry, active_orders: Iterable[Order]
                       ) -> Conflict | None:
    """Active orders of the admission for the same medication, lab test, or imaging modality
    and body part."""
    same = [o for o in active_orders if o.active and _same(kind, details, o)]
    if not same:
        return None
    listed = "; ".join(f"{o.description} ({str(o.status).replace('_', ' ')}, placed "
                       f"{o.placed_at[:16].replace('T', ' ')})" for o in same)
    return Conflict(DUPLICATE_ORDER, f"Already ordered on this admission: {listed}.")


# ------------------------------------------------------------------ all of them
def check_order(kind: str, details: Entry, *, allergies: Sequence[Entry] = (),
                active_orders: Sequence[Order] = (), medication: Entry | None = None,
                dose: Decimal | None = None, unit: Entry | None = None,
                dose_unit: Entry | None = None, frequency: Entry | None = None,
                allergen_names: Mapping[str, str] | None = None) -> list[Conflict]:
    """Every check the order fails, allergy first, then dose, then duplicate."""
    found: list[Conflict | None] = []
    if kind == "medication" and medication is not None:
        found.append(allergy_conflict(medication, allergies, allergen_names))
        if dose is not None and unit is not None:
            found.append(dose_conflict(medication, dose, unit, dose_unit, frequency))
    found.append(duplicate_conflict(kind, details, active_orders))
    return [c for c in found if c is not None]


def clean_overrides(overrides: Mapping[str, str] | None) -> dict[str, str]:
    """Overrides by check type (``allergy_conflict`` is read as ``allergy-conflict``), reasons
    trimmed; an unknown check type is invalid input."""
    cleaned: dict[str, str] = {}
    for key, reason in (overrides or {}).items():
        check = str(key).strip().replace("_", "-")
        if check not in CHECK_TYPES:
            raise InvalidInput(f"Unknown check {key!r} in overrides; the checks are "
                               f"{', '.join(CHECK_TYPES)}.", field="overrides")
        reason = " ".join(str(reason or "").split())
        if len(reason) > 500:
            raise InvalidInput("An override reason is 500 characters at most.",
                               field="overrides")
        cleaned[check] = reason
    return cleaned


def unresolved(conflicts: Iterable[Conflict], overrides: Mapping[str, str]) -> list[Conflict]:
    """The conflicts without a non-empty reason in ``overrides`` (each needs its own)."""
    return [c for c in conflicts if not (overrides.get(c.type) or "").strip()]
