"""Units and dose frequencies, as plain arithmetic on reference entries.

A Unit entry (``R_Unit``) carries a ``dimension`` (mass, volume, units, count, …) and a
``factor`` relative to that dimension's base unit (mass: mg, so g is 1000 and mcg 0.001).
Amounts convert only within one dimension.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from patients.domain.errors import UnitMismatch

HOURS_PER_DAY = Decimal(24)
DOSE_DIMENSIONS = ("mass", "volume", "units", "count")  # what a dose may be given in


def _name(unit: Mapping[str, Any]) -> str:
    return str(unit.get("name") or unit.get("code") or "?")


def _factor(unit: Mapping[str, Any]) -> Decimal:
    return Decimal(str(unit.get("factor", 1)))


def convertible(from_unit: Mapping[str, Any], to_unit: Mapping[str, Any]) -> bool:
    """True when both units measure the same dimension."""
    dimension = from_unit.get("dimension")
    return dimension is not None and dimension == to_unit.get("dimension")


def convert(amount: Decimal, from_unit: Mapping[str, Any], to_unit: Mapping[str, Any]
            ) -> Decimal:
    """``amount`` in ``from_unit`` expressed in ``to_unit``; UnitMismatch (422, field
    ``unit``) when the two units measure different dimensions."""
    if from_unit.get("code") is not None and from_unit.get("code") == to_unit.get("code"):
        return amount
    if not convertible(from_unit, to_unit):
        raise UnitMismatch(
            f"{_name(from_unit)} ({from_unit.get('dimension') or 'no dimension'}) cannot be "
            f"converted to {_name(to_unit)} ({to_unit.get('dimension') or 'no dimension'}); "
            f"give the amount in a unit of {to_unit.get('dimension') or 'the same dimension'}.")
    return amount * _factor(from_unit) / _factor(to_unit)


def doses_per_day(frequency: Mapping[str, Any]) -> Decimal:
    """How many doses a frequency gives in 24 hours: 24 / ``hours``; ``hours`` 0 (once) → 1."""
    hours = Decimal(str(frequency.get("hours") or 0))
    if hours <= 0:
        return Decimal(1)
    return HOURS_PER_DAY / hours
