"""Strict input at the edge: the rules every request body, query parameter and page form
applies before a use case sees a value, written once.

* Text refuses control characters (Unicode category Cc; multi-line text keeps newline and
  tab) and the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
  make a name read differently from how it is stored; every string has a maximum length.
* Instants are ISO 8601 text (never numbers); one without an offset is read in the hospital's
  time zone (``settings.HOSPITAL_TIME_ZONE``); years outside 1900–2100 are refused.
* Dates are ISO 8601 text (``"birth_date": 0`` is refused, not read as 1970-01-01); a
  :data:`PastDate` is not in the future and not before 1900.

The pydantic types (:func:`Text`, :func:`MultilineText`, :data:`Instant`, :data:`PastDate`,
:data:`CalendarDate`, :func:`Amount`) serve the API; :class:`CheckedForm` and
:func:`text_error` serve the pages' Django forms, so both refuse the same values with the
same words.
"""

from __future__ import annotations

import unicodedata
from datetime import date, datetime, tzinfo
from decimal import Decimal
from functools import lru_cache
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import forms
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from hisadmin.core.numbers import NUMBER_MAX_LENGTH, read_decimal

EARLIEST_YEAR, LATEST_YEAR = 1900, 2100
# "2026-03-01T08:00:00.123456+05:45" is 32 characters; a little room, never a megabyte.
INSTANT_MAX_LENGTH = 40
DATE_MAX_LENGTH = 10
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
MULTILINE_CONTROLS = frozenset("\n\t")


# --- text -------------------------------------------------------------------------------

def text_error(value: str, *, multiline: bool = False) -> str | None:
    """Why ``value`` is refused as text (None when it is fine): a control character (newline
    and tab allowed when ``multiline``, a browser's CRLF counting as a newline), a
    bidirectional override or isolate, or an unpaired surrogate."""
    if multiline:
        value = value.replace("\r\n", "\n")
    for char in value:
        if char in BIDI_CONTROLS:
            return (f"Remove the text-direction character U+{ord(char):04X}: it makes text "
                    "show differently from how it is kept.")
        category = unicodedata.category(char)
        if category == "Cc" and not (multiline and char in MULTILINE_CONTROLS):
            where = "" if multiline else " (this field takes one line)"
            return f"Remove the control character U+{ord(char):04X}{where}."
        if category == "Cs":
            return f"Remove the unpaired surrogate U+{ord(char):04X}."
    return None


def _checked_text(multiline: bool) -> Any:
    def check(value: str) -> str:
        error = text_error(value, multiline=multiline)
        if error is not None:
            raise PydanticCustomError("text_characters", error)
        return value
    return check


_SINGLE_LINE, _MULTI_LINE = _checked_text(False), _checked_text(True)


def Text(max_length: int, *, min_length: int = 0) -> Any:  # noqa: N802 (a type, read as one)
    """A one-line string of at most ``max_length`` characters, printable text only."""
    return Annotated[str, _lengths(min_length, max_length), AfterValidator(_SINGLE_LINE)]


def MultilineText(max_length: int, *, min_length: int = 0) -> Any:  # noqa: N802
    """Free text (notes, reports, reasons) of at most ``max_length`` characters: like
    :func:`Text`, with newlines and tabs allowed."""
    return Annotated[str, _lengths(min_length, max_length), AfterValidator(_MULTI_LINE)]


def _lengths(min_length: int, max_length: int) -> Any:
    return Field(min_length=min_length or None, max_length=max_length)


# An opaque value given back as it was received (a page's continuation token).
PageToken = Text(2000)


# --- instants and dates -----------------------------------------------------------------

@lru_cache(maxsize=8)
def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(
            f"HOSPITAL_TIME_ZONE={name!r} is not an IANA time zone name such as "
            "Europe/Madrid.") from None


def hospital_time_zone() -> tzinfo:
    """Where a time written without an offset was meant: ``settings.HOSPITAL_TIME_ZONE``
    (an IANA name; unset: ``TIME_ZONE``). Read on every call, so a test may change it."""
    return _zone(getattr(settings, "HOSPITAL_TIME_ZONE", "") or settings.TIME_ZONE)


def check_zone_name(name: str) -> str:
    """``name`` when it is an IANA time zone; ImproperlyConfigured otherwise (start-up)."""
    _zone(name)
    return name


def _in_range(year: int) -> bool:
    return EARLIEST_YEAR <= year <= LATEST_YEAR


def read_instant(value: object) -> datetime:
    """An aware datetime from ISO 8601 text; naive text is read in the hospital's time zone.
    ValueError (with the words to show) for anything else: numbers, other spellings, years
    outside 1900–2100. A datetime given by Python code is held to the same rules."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        if len(value) > INSTANT_MAX_LENGTH:
            raise ValueError(f"Give an ISO 8601 date and time (at most {INSTANT_MAX_LENGTH} "
                             "characters), such as 2026-03-01T08:00:00+01:00.")
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("Give an ISO 8601 date and time, such as 2026-03-01T08:00:00+01:00 "
                             f"(without an offset: {_zone_name()} time).") from None
    else:
        raise ValueError("Give the date and time as ISO 8601 text, such as "
                         "\"2026-03-01T08:00:00+01:00\", not a number.")
    if not _in_range(moment.year):
        raise ValueError(f"Give a year from {EARLIEST_YEAR} to {LATEST_YEAR}.")
    return moment if moment.tzinfo else moment.replace(tzinfo=hospital_time_zone())


def _zone_name() -> str:
    return str(getattr(settings, "HOSPITAL_TIME_ZONE", "") or settings.TIME_ZONE)


def instant_text(moment: datetime) -> str:
    """How an instant is kept: ISO 8601 in UTC (``+00:00``), as ``placedAt`` is."""
    return moment.astimezone(ZoneInfo("UTC")).isoformat()


def _date_text(value: object) -> date:
    """A date from ISO 8601 text, no range checked; ValueError for numbers and the like."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("Give the date as text, YYYY-MM-DD, not a number.")
    try:
        if len(value) > DATE_MAX_LENGTH:
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError("Give the date as YYYY-MM-DD, such as 1980-05-01.") from None


def read_date(value: object) -> date:
    """A calendar date from ISO 8601 text (``YYYY-MM-DD``), years 1900–2100. ValueError for
    anything else, numbers and datetimes included."""
    day = _date_text(value)
    if not _in_range(day.year):
        raise ValueError(f"Give a year from {EARLIEST_YEAR} to {LATEST_YEAR}.")
    return day


def hospital_today() -> date:
    return timezone.now().astimezone(hospital_time_zone()).date()


def check_past_date(day: date) -> date:
    """``day`` when it is neither in the future (the hospital's today) nor before 1900."""
    if day > hospital_today():
        raise ValueError("Date of birth cannot be in the future.")
    if day.year < EARLIEST_YEAR:
        raise ValueError(f"Give a date from {EARLIEST_YEAR} on.")
    return day


def read_past_date(value: object) -> date:
    """A date of birth from ISO 8601 text: not in the future, not before 1900."""
    return check_past_date(_date_text(value))


def _pydantic(reader: Any, kind: str) -> Any:
    def validate(value: object) -> Any:
        try:
            return reader(value)
        except ValueError as error:
            raise PydanticCustomError(kind, str(error)) from None
    return validate


Instant = Annotated[datetime, BeforeValidator(_pydantic(read_instant, "instant")),
                    WithJsonSchema({"type": "string", "format": "date-time",
                                    "maxLength": INSTANT_MAX_LENGTH})]
"""ISO 8601 date and time text → an aware datetime (naive text: the hospital's time)."""

CalendarDate = Annotated[date, BeforeValidator(_pydantic(read_date, "date")),
                         WithJsonSchema({"type": "string", "format": "date",
                                         "maxLength": DATE_MAX_LENGTH})]
"""ISO 8601 date text (``YYYY-MM-DD``), years 1900–2100."""

PastDate = Annotated[date, BeforeValidator(_pydantic(read_past_date, "past_date")),
                     WithJsonSchema({"type": "string", "format": "date",
                                     "maxLength": DATE_MAX_LENGTH})]
"""A date of birth: ISO 8601 date text, not in the future, not before 1900."""


# --- numbers ----------------------------------------------------------------------------

def _short_number(value: object) -> object:
    """Decimal text through the one reader (:func:`hisadmin.core.numbers.read_decimal`, no
    decimal comma in the API: ``"1,5"`` is refused, never read as 15 or 1500); JSON true and
    false refused; JSON numbers left to pydantic, as before."""
    if isinstance(value, bool):  # JSON true is not 1
        raise PydanticCustomError("number_type", "Give a number, not true or false.")
    if isinstance(value, str):
        try:
            return read_decimal(value, comma=False)
        except ValueError as error:
            raise PydanticCustomError("number_text", str(error)) from None
    return value


def Amount(**constraints: Any) -> Any:  # noqa: N802 (a type, read as one)
    """A decimal given as a JSON number or as decimal text of at most 40 characters with a
    decimal point (``"0.5"``; ``"0,5"``, ``"1 000"`` and ``"1e3"`` are refused);
    ``constraints`` are pydantic's (``gt``, ``max_digits``, ``decimal_places``, …)."""
    schema: dict[str, Any] = {"anyOf": [{"type": "number"},
                                        {"type": "string", "maxLength": NUMBER_MAX_LENGTH}]}
    return Annotated[Decimal, BeforeValidator(_short_number), Field(**constraints),
                     WithJsonSchema(schema)]


# --- Django forms -----------------------------------------------------------------------

class TextValidator:
    """A Django validator for :func:`text_error`'s rules (one line, or ``multiline``)."""

    def __init__(self, *, multiline: bool = False) -> None:
        self.multiline = multiline

    def __call__(self, value: object) -> None:
        if isinstance(value, str):
            error = text_error(value, multiline=self.multiline)
            if error is not None:
                raise ValidationError(error, code="text_characters")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextValidator) and other.multiline == self.multiline

    def __hash__(self) -> int:
        return hash(self.multiline)


def past_date_validator(value: date) -> None:
    """A Django validator for a date of birth (:func:`check_past_date`)."""
    try:
        check_past_date(value)
    except ValueError as error:
        raise ValidationError(str(error), code="past_date") from None


def year_range_validator(value: date | datetime) -> None:
    if not _in_range(value.year):
        raise ValidationError(f"Give a year from {EARLIEST_YEAR} to {LATEST_YEAR}.",
                              code="year_range")


class CheckedForm(forms.Form):
    """A Django form holding every text field to :func:`text_error`'s rules (a textarea is
    multi-line text, every other field one line), every date and time to 1900–2100 and a
    date and time without an offset to the hospital's time zone, the error on the field
    itself. Fields added after ``__init__`` are covered too: the checks are attached when the
    form is cleaned."""

    def full_clean(self) -> None:
        for field in self.fields.values():
            _guard(field)
        # Django reads a naive date and time in the current time zone: make it the hospital's.
        with timezone.override(hospital_time_zone()):
            super().full_clean()


def _guard(field: forms.Field) -> None:
    if isinstance(field, forms.CharField):
        check = TextValidator(multiline=isinstance(field.widget, forms.Textarea))
        if check not in field.validators:
            field.validators.append(check)
    if isinstance(field, (forms.DateField, forms.DateTimeField)):
        # a date of birth has its own words for a date out of range
        if not any(v is year_range_validator or v is past_date_validator
                   for v in field.validators):
            field.validators.append(year_range_validator)


def safe_next(request: Any) -> str:
    """The ``next`` query parameter when it is a page of this site (the way back to a list
    after acting on one of its rows), else "": never another host."""
    back = request.GET.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure()):
        return str(back)
    return ""
