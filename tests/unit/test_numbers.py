"""The one reader of typed numbers: a decimal comma read as a decimal, never as a tenfold or
thousandfold dose; group separators and ambiguous forms refused with words that say what to
write; the API's text without a decimal comma."""

from __future__ import annotations

from decimal import Decimal

import pytest

from hisadmin.core.numbers import DecimalText, decimal_words, read_decimal


@pytest.mark.parametrize(("typed", "meant"), [
    ("0,5", "0.5"), ("1,5", "1.5"), ("0.5", "0.5"), (".5", "0.5"), ("5.", "5"), (",5", "0.5"),
    ("5,", "5"), (" 12,5 ", "12.5"), ("0,125", "0.125"), ("1234,567", "1234.567"),
    ("1.500", "1.5"), ("-1,5", "-1.5"), ("1000", "1000"), ("007", "7")])
def test_it_reads_a_decimal_point_or_comma(typed: str, meant: str) -> None:
    assert read_decimal(typed) == Decimal(meant)


@pytest.mark.parametrize(("typed", "words"), [
    ("1 000", "without spaces"), ("1\u00a0000", "without spaces"),
    ("1\u202f000", "without spaces"), ("1_000", "without spaces"), ("1'000", "without spaces"),
    ("1,000.5", "one decimal separator"), ("1.000,5", "one decimal separator"),
    ("1,500", "could be 1.5 or 1500"), ("1,000", "could be 1 or 1000"),
    ("12,500", "could be 12.5 or 12500"), ("1e3", "Give a number"), ("NaN", "Give a number"),
    ("Infinity", "Give a number"), ("\u0661,\u0665", "digits 0 to 9"), ("", "Give a number"),
    ("half", "Give a number"), ("1" * 41, "at most 40")])
def test_it_refuses_what_could_be_another_number_and_says_what_to_write(
        typed: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        read_decimal(typed)


def test_the_api_takes_no_decimal_comma_and_says_how_to_write_it() -> None:
    with pytest.raises(ValueError, match="with a point: '0.5'"):
        read_decimal("0,5", comma=False)
    assert read_decimal("0.5", comma=False) == Decimal("0.5")
    assert read_decimal(2, comma=False) == 2 and read_decimal(0.5) == Decimal("0.5")
    with pytest.raises(ValueError, match="not true or false"):
        read_decimal(True)


def test_the_form_field_is_a_text_field_with_the_decimal_pad_and_keeps_what_was_typed(
) -> None:
    field = DecimalText(min_value=Decimal("0.001"), max_digits=10, decimal_places=3)
    html = field.widget.render("dose", "1 000", attrs=field.widget_attrs(field.widget))
    assert 'type="text"' in html and 'inputmode="decimal"' in html and 'value="1 000"' in html
    assert "step" not in html and 'type="number"' not in html
    assert field.clean("0,5") == Decimal("0.5")
    with pytest.raises(Exception, match="without spaces"):
        field.clean("1 000")


def test_a_number_in_words_has_no_exponent_and_no_trailing_zeros() -> None:
    assert [decimal_words(v) for v in (Decimal("0.500"), "1500", Decimal("1.5E+3"), None)] == [
        "0.5", "1500", "1500", ""]
