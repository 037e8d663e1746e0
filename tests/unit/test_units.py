"""Units convert within one dimension by their factors; a frequency gives doses per day."""

from __future__ import annotations

from decimal import Decimal

import pytest

from patients.domain.errors import InvalidInput, UnitMismatch
from patients.domain.units import convert, convertible, doses_per_day

MG = {"code": "mg", "name": "milligram", "dimension": "mass", "factor": 1}
G = {"code": "g", "name": "gram", "dimension": "mass", "factor": 1000}
MCG = {"code": "mcg", "name": "microgram", "dimension": "mass", "factor": 0.001}
ML = {"code": "ml", "name": "millilitre", "dimension": "volume", "factor": 1}
L = {"code": "l", "name": "litre", "dimension": "volume", "factor": 1000}
UNITS = {"code": "units", "name": "units", "dimension": "units", "factor": 1}
OLD = {"code": "drop", "name": "drop"}  # an entry without a dimension converts to nothing


@pytest.mark.parametrize(("amount", "source", "target", "expected"), [
    ("1", G, MG, "1000"), ("1000", MG, G, "1"), ("250", MCG, MG, "0.25"),
    ("0.5", MG, MCG, "500"), ("1.5", L, ML, "1500"), ("10", UNITS, UNITS, "10"),
    ("3", MG, MG, "3"), ("2", OLD, OLD, "2"),
])
def test_it_converts_within_a_dimension(amount, source, target, expected) -> None:
    assert convert(Decimal(amount), source, target) == Decimal(expected)


@pytest.mark.parametrize(("source", "target"), [(ML, MG), (UNITS, MG), (MG, L), (OLD, MG)])
def test_it_refuses_another_dimension_naming_both_units(source, target) -> None:
    assert not convertible(source, target)
    with pytest.raises(UnitMismatch) as refused:
        convert(Decimal(1), source, target)
    error = refused.value
    assert isinstance(error, InvalidInput)
    assert error.http_status == 422 and error.field == "unit"
    assert source["name"] in str(error) and target["name"] in str(error)


@pytest.mark.parametrize(("hours", "per_day"), [
    (4, "6"), (6, "4"), (8, "3"), (12, "2"), (24, "1"), (0, "1"), (None, "1"), (48, "0.5"),
])
def test_it_counts_doses_per_day(hours, per_day) -> None:
    assert doses_per_day({"code": "F", "hours": hours}) == Decimal(per_day)
