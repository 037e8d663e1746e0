"""Numbers as people type them: one reader for every dose, volume and measurement.

A ward types a half as ``0,5`` as often as ``0.5``; a browser's number field turns ``0,5``
into ``05`` and a tenfold dose follows. So the pages take numbers in a text field
(``inputmode="decimal"``, a phone's number pad) and read them here, and the API reads its
decimal text here too:

* one decimal separator, a point or (on the pages) a comma: ``0,5`` ``1,5`` ``0.5`` ``.5``
  ``5.`` ``,5``; ASCII digits only, an optional sign, spaces around it ignored;
* refused, with words that say what to write instead: group separators (``1 000``,
  ``1,000.5``, ``1.000,5``), a comma followed by exactly three digits after a whole number
  (``1,500``: 1.5 or 1500?), exponents (``1e3``), underscores, other scripts' digits,
  ``NaN`` and infinities. Nothing is ever read as another number than the one meant.

The API takes no decimal comma (a JSON number has a point, and ``"1,500"`` means 1500 to
half of the integrators): ``comma=False`` says so.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

NUMBER_MAX_LENGTH = 40
_PLAIN = re.compile(r"[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)")
# a whole number of one to three digits, a comma, three digits: a thousands group or a
# decimal comma, and nobody can tell which
_AMBIGUOUS = re.compile(r"[+-]?[1-9][0-9]{0,2},[0-9]{3}")
# what a browser may let through before the server reads it (the field's ``pattern``)
BROWSER_PATTERN = r"\s*[+\-]?([0-9]+([.,][0-9]*)?|[.,][0-9]+)\s*"
EXAMPLE = "0.5 or 0,5"


def read_decimal(value: object, *, comma: bool = True) -> Decimal:
    """The number ``value`` says (a Decimal, an int, or text as above); ValueError with the
    words to show when it is refused. ``comma``: a decimal comma is read (the pages) or
    refused (the API)."""
    if isinstance(value, bool):  # True is not 1
        raise ValueError("Give a number, not true or false.")
    if isinstance(value, (int, Decimal)):
        if isinstance(value, Decimal) and not value.is_finite():
            raise ValueError("Give a finite number.")
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))
    if not isinstance(value, str):
        raise ValueError("Give a number.")
    if len(value) > NUMBER_MAX_LENGTH:
        raise ValueError(f"Give a number of at most {NUMBER_MAX_LENGTH} characters.")
    text = value.strip()
    if not _PLAIN.fullmatch(text):
        raise ValueError(_why_not(text, comma=comma))
    if "," in text:
        if not comma:
            raise ValueError(f"Write the decimal with a point: {text.replace(',', '.')!r}, "
                             "not a comma.")
        if _AMBIGUOUS.fullmatch(text):
            whole, _, part = text.partition(",")
            small = f"{whole}.{part.rstrip('0')}" if part.rstrip("0") else whole
            raise ValueError(f"“{text}” could be {small} or {whole}{part}: write it as "
                             f"{small} or as {whole}{part}, without a thousands separator.")
        text = text.replace(",", ".")
    if text.endswith("."):
        text += "0"
    if text.lstrip("+-").startswith("."):
        text = text.replace(".", "0.", 1)
    return Decimal(text)


def _why_not(text: str, *, comma: bool) -> str:
    example = EXAMPLE if comma else "0.5"
    if not text:
        return "Give a number."
    if any(c.isspace() for c in text) or "'" in text or "_" in text:
        return (f"Write the number without spaces or group separators (1000, not 1 000); "
                f"a decimal as {example}.")
    if text.count(".") + text.count(",") > 1:
        return (f"Use one decimal separator and no thousands separator (1000.5, not "
                f"1,000.5); a decimal as {example}.")
    if any(c.isdigit() and not c.isascii() for c in text):
        return "Write the number with the digits 0 to 9."
    return f"Give a number, such as {example}."


class DecimalText(forms.DecimalField):
    """A decimal a person types (a dose, a volume, a measurement): a text field with the
    phone's decimal pad, read by :func:`read_decimal` (a decimal comma included); a refused
    value stays in the field as typed, with the reason beside it."""

    widget = forms.TextInput

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.widget.attrs.update({"inputmode": "decimal", "autocomplete": "off",
                                  "pattern": BROWSER_PATTERN, "class": "decimal-input",
                                  "title": f"A number, such as {EXAMPLE}"})

    def to_python(self, value: Any) -> Decimal | None:
        if value in self.empty_values or (isinstance(value, str) and not value.strip()):
            return None
        try:
            return read_decimal(value)
        except ValueError as error:
            raise ValidationError(str(error), code="invalid") from None

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        # not a number field: no step/min/max for the browser to enforce its own way
        return forms.Field.widget_attrs(self, widget)


def decimal_words(value: Decimal | str | int | float | None) -> str:
    """A number as a ward reads it: no exponent, no trailing zeros (``0.5``, ``1500``)."""
    if value is None or value == "":
        return ""
    number = value if isinstance(value, Decimal) else read_decimal(value, comma=False)
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
