"""Lab values and imaging reports: flags at the range edges, unit conversion, what is missing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from patients.domain.errors import InvalidInput, UnitMismatch
from patients.domain.results import (
    MAX_REPORT,
    GivenValue,
    abnormal_in_words,
    flag,
    flags_summary,
    imaging_report,
    in_words,
    lab_values,
    resulted,
    value_text,
)

UNITS = {"mmol_l": {"code": "mmol_l", "name": "mmol/L", "dimension": "substance_concentration",
                    "factor": 1},
         "umol_l": {"code": "umol_l", "name": "µmol/L", "dimension": "substance_concentration",
                    "factor": 0.001},
         "g_l": {"code": "g_l", "name": "g/L", "dimension": "mass_concentration", "factor": 1000},
         "mg_l": {"code": "mg_l", "name": "mg/L", "dimension": "mass_concentration", "factor": 1}}
BMP = [{"code": "NA", "name": "Sodium", "unit": "mmol_l", "low": 133, "high": 146},
       {"code": "CREAT", "name": "Creatinine", "unit": "umol_l", "low": 59, "high": 104}]


def given(na: str = "140", creat: str = "80", na_unit: str | None = None,
          creat_unit: str | None = None) -> list[GivenValue]:
    return [GivenValue("NA", Decimal(na), na_unit), GivenValue("CREAT", Decimal(creat), creat_unit)]


@pytest.mark.parametrize(("value", "expected"), [
    ("133", None), ("146", None), ("140", None),  # the edges are in range
    ("132.99", "L"), ("146.01", "H"), ("0", "L"), ("1000", "H")])
def test_it_flags_above_high_and_below_low_only(value: str, expected: str | None) -> None:
    assert flag(Decimal(value), 133, 146) == expected


def test_a_missing_bound_flags_nothing_on_that_side() -> None:
    assert flag(Decimal("-5"), None, 10) is None
    assert flag(Decimal("99"), 1, None) is None


def test_it_keeps_one_value_per_analyte_in_the_tests_order_with_flags() -> None:
    values = lab_values(BMP, list(reversed(given("150", "50"))), UNITS)
    assert [(v["analyte"], v["value"], v["unit"], v["flag"]) for v in values] == [
        ("NA", 150, "mmol_l", "H"), ("CREAT", 50, "umol_l", "L")]
    assert values[0] == {"analyte": "NA", "name": "Sodium", "value": 150, "text": "150",
                         "unit": "mmol_l", "unitName": "mmol/L", "low": 133, "high": 146,
                         "flag": "H"}
    assert flags_summary(values) == {"abnormal": True, "high": ["NA"], "low": ["CREAT"]}


def test_a_value_in_another_unit_of_the_same_dimension_is_converted() -> None:
    values = lab_values(BMP, given(creat="0.2", creat_unit="mmol_l"),
                        UNITS)
    creat = values[1]
    assert creat["value"] == 200 and creat["unit"] == "umol_l" and creat["flag"] == "H"
    same = lab_values(BMP, given(na_unit="mmol_l"), UNITS)
    assert same[0]["value"] == 140 and same[0]["flag"] is None


def test_a_unit_of_another_dimension_is_refused_on_the_analyte() -> None:
    with pytest.raises(UnitMismatch) as err:
        lab_values(BMP, given(na_unit="g_l"), UNITS)
    assert err.value.http_status == 422 and err.value.field == "results.NA.unit"
    assert "Sodium" in str(err.value)


def test_an_unknown_unit_is_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        lab_values(BMP, given(na_unit="furlong"), UNITS)
    assert err.value.field == "results.NA.unit"


def test_a_missing_value_names_every_missing_analyte() -> None:
    with pytest.raises(InvalidInput) as err:
        lab_values(BMP, [], UNITS)
    assert err.value.http_status == 422 and err.value.field == "results.NA"
    assert "Sodium" in str(err.value) and "Creatinine" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        lab_values(BMP, given()[:1], UNITS)
    assert err.value.field == "results.CREAT"


def test_unknown_duplicate_and_non_finite_values_are_refused() -> None:
    with pytest.raises(InvalidInput, match="no analyte") as err:
        lab_values(BMP, [*given(), GivenValue("K", Decimal("4"))], UNITS)
    assert err.value.field == "results.K"
    with pytest.raises(InvalidInput, match="twice"):
        lab_values(BMP, [*given(), GivenValue("NA", Decimal("141"))], UNITS)
    with pytest.raises(InvalidInput, match="number"):
        lab_values(BMP, given(na="NaN"), UNITS)


def test_decimals_are_kept_as_json_numbers() -> None:
    values = lab_values(BMP, given(na="140.5", creat="79.25"), UNITS)
    assert values[0]["value"] == 140.5 and values[1]["value"] == 79.25


def test_an_imaging_report_is_required_and_bounded() -> None:
    assert imaging_report("  No consolidation.  ") == "No consolidation."
    for empty in ("", "   ", None):
        with pytest.raises(InvalidInput) as err:
            imaging_report(empty)
        assert err.value.field == "report"
    assert len(imaging_report("x" * MAX_REPORT)) == MAX_REPORT
    with pytest.raises(InvalidInput) as err:
        imaging_report("x" * (MAX_REPORT + 1))
    assert err.value.field == "report"


def test_resulted_orders_are_the_lab_and_imaging_ones_with_results_newest_first() -> None:
    orders = [{"kind": "lab", "results": {"resultedAt": "2026-01-01T10:00"}, "n": 1},
              {"kind": "medication", "n": 2}, {"kind": "lab", "n": 3},
              {"kind": "imaging", "results": {"resultedAt": "2026-01-02T10:00"}, "n": 4}]
    assert [o["n"] for o in resulted(orders)] == [4, 1]


def test_a_typed_value_keeps_its_precision() -> None:
    values = lab_values(BMP, given("128.0", "80.50"), UNITS)
    assert [value_text(v) for v in values] == ["128.0", "80.50"]
    assert values[0]["value"] == 128  # the JSON number is unchanged


def test_a_converted_value_drops_meaningless_zeros() -> None:
    creat = lab_values(BMP, given(creat="0.2000", creat_unit="mmol_l"), UNITS)[1]
    assert value_text(creat) == "200"


def test_a_value_stored_before_the_text_was_kept_shows_its_number() -> None:
    assert value_text({"value": 5.5}) == "5.5" and value_text({"value": 7}) == "7"


def test_values_read_in_words_with_units_and_flags() -> None:
    na, creat = lab_values(BMP, given("128", "120.0"), UNITS)
    assert in_words(na) == "Sodium 128 mmol/L, low"
    assert in_words(creat) == "Creatinine 120.0 µmol/L, high"
    assert in_words({**na, "flag": None}) == "Sodium 128 mmol/L"
    assert abnormal_in_words([na, creat]) == ["Creatinine 120.0 µmol/L, high",
                                              "Sodium 128 mmol/L, low"]
