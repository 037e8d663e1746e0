"""Search parameters: parsed and checked before anything is read. A malformed value, an
unsupported modifier or prefix → FhirError 400 (``invalid`` / ``not-supported``), never a
server error. Unknown parameters are ignored (FHIR's lenient default) and named in the
Bundle, unless the client sends ``Prefer: handling=strict``: then they are a 400 too."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from urllib.parse import urlencode

from django.http import QueryDict

from fhir_facade.envelopes import FhirError
from hisadmin.core.inputs import text_error

DEFAULT_COUNT = 20
MAX_COUNT = 100
MAX_OFFSET = 10_000
# A search value is a name, a date or an id; a cursor is a signed token, a little longer.
MAX_VALUE_LENGTH = 200
MAX_CURSOR_LENGTH = 2000
ID = re.compile(r"[A-Za-z0-9\-.]{1,64}")
_DATE = re.compile(r"(eq|ne|gt|lt|ge|le|sa|eb|ap)?(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
_DATE_PREFIXES = ("eq", "gt", "lt", "ge", "le")
# Parameters every search understands (paging, format) besides each type's own.
COMMON = ("_count", "_offset", "_cursor", "_format")
JSON_FORMATS = ("json", "application/json", "application/fhir+json")


def bad(diagnostics: str, code: str = "invalid") -> FhirError:
    return FhirError(400, code, diagnostics)


@dataclass(frozen=True)
class DateBound:
    """One ``birthdate`` value: a prefix and the calendar range its (partial) date spans."""

    prefix: str
    start: str
    end: str

    def matches(self, value: str | None) -> bool:
        if not value:
            return False
        return {
            "eq": self.start <= value <= self.end,
            "gt": value > self.end,
            "ge": value >= self.start,
            "lt": value < self.start,
            "le": value <= self.end,
        }[self.prefix]

    def conditions(self) -> list[tuple[str, str]]:
        """(operator, value) comparisons on an ISO date string that select the same."""
        return {
            "eq": [(">=", self.start), ("<=", self.end)],
            "gt": [(">", self.end)],
            "ge": [(">=", self.start)],
            "lt": [("<", self.start)],
            "le": [("<=", self.end)],
        }[self.prefix]


def _prefix(name: str, prefix: str | None) -> str:
    """A date parameter's comparison (``eq`` when none); 400 not-supported for ``ne``,
    ``sa``, ``eb`` and ``ap``."""
    prefix = prefix or "eq"
    if prefix not in _DATE_PREFIXES:
        raise bad(
            f"The {prefix} prefix is not supported on {name}; use {', '.join(_DATE_PREFIXES)}.",
            "not-supported",
        )
    return prefix


def parse_date(name: str, text: str) -> DateBound:
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise bad(
            f"{name} must be a date (YYYY, YYYY-MM or YYYY-MM-DD, optionally after a "
            f"prefix such as ge or lt), not {text[:40]!r}."
        )
    prefix, year, month, day = match.groups()
    prefix = _prefix(name, prefix)
    try:
        if day:
            start = end = date(int(year), int(month), int(day)).isoformat()
        elif month:
            first = date(int(year), int(month), 1)
            last = date(int(year) + (first.month == 12), first.month % 12 + 1, 1)
            start, end = first.isoformat(), date.fromordinal(last.toordinal() - 1).isoformat()
        else:
            start, end = f"{int(year):04d}-01-01", f"{int(year):04d}-12-31"
    except ValueError:
        raise bad(f"{name}: {text[:40]!r} is not a calendar date.") from None
    return DateBound(prefix, start, end)


# A dateTime search value: a date, or a date and time (minutes, seconds, fractions) with an
# offset or Z, or without one (the hospital's time).
_INSTANT = re.compile(r"(eq|ne|gt|lt|ge|le|sa|eb|ap)?(\d{4}(?:-\d{2}(?:-\d{2})?)?)"
                      r"(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:\d{2})?)?")
_SPACED_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}:\d{2})$")


@dataclass(frozen=True)
class InstantBound:
    """One ``date`` value on an instant: a prefix and the span [start, end) its precision
    covers (a day, a minute, a second…), both aware."""

    prefix: str
    start: datetime
    end: datetime

    def matches(self, value: datetime) -> bool:
        return {
            "eq": self.start <= value < self.end,
            "gt": value >= self.end,
            "ge": value >= self.start,
            "lt": value < self.start,
            "le": value < self.end,
        }[self.prefix]


def _span(clock: str) -> timedelta:
    """How long a time of this precision lasts: a minute, a second, a microsecond."""
    if len(clock) == 5:
        return timedelta(minutes=1)
    if len(clock) == 8:
        return timedelta(seconds=1)
    return timedelta(microseconds=1)


def parse_instant(name: str, text: str, tz: tzinfo) -> InstantBound:
    """A ``date`` search value on an instant (FHIR dateTime precision): ``ge2026-11-28``,
    ``lt2026-11-28T09:30``, ``2026-11-28T09:30:15.123456+01:00``; without an offset it is the
    hospital's time (``tz``). An offset's ``+`` sent unencoded (read as a space) is
    taken as the ``+`` it was. FhirError 400 otherwise."""
    value = _SPACED_OFFSET.sub(r"\1+\2", text.strip())
    match = _INSTANT.fullmatch(value)
    if match is None:
        raise bad(
            f"{name} must be a date or a date and time (YYYY-MM-DD or "
            f"YYYY-MM-DDThh:mm[:ss[.ffffff]][Z or ±hh:mm], optionally after ge, gt, le, lt "
            f"or eq), not {text[:40]!r}."
        )
    prefix, day, clock, offset = match.groups()
    prefix = _prefix(name, prefix)
    if clock is not None and len(day) != 10:
        raise bad(f"{name}: a time needs a full date (YYYY-MM-DD), not {text[:40]!r}.")
    try:
        if clock is None:
            bound = parse_date(name, f"{prefix}{day}")
            start = datetime.fromisoformat(bound.start).replace(tzinfo=tz)
            end = datetime.fromisoformat(bound.end).replace(tzinfo=tz) + timedelta(days=1)
            return InstantBound(prefix, start, end)
        fraction = clock[9:]
        whole = clock[:8]
        moment = datetime.fromisoformat(f"{day}T{whole}")
        if fraction:
            moment = moment.replace(microsecond=int(fraction[:6].ljust(6, "0")))
        if offset:
            moment = moment.replace(tzinfo=datetime.strptime(
                offset.replace("Z", "+00:00"), "%z").tzinfo)
        else:
            moment = moment.replace(tzinfo=tz)
    except ValueError:
        raise bad(f"{name}: {text[:40]!r} is not a calendar date and time.") from None
    return InstantBound(prefix, moment, moment + _span(clock))


def parse_token(text: str) -> tuple[str | None, str]:
    """``system|code`` → (system, code); ``|code`` → ("", code); ``code`` → (None, code)."""
    if "|" in text:
        system, code = text.split("|", 1)
        return system, code
    return None, text


def parse_reference(name: str, text: str, resource_type: str = "Patient") -> str:
    """The id of ``Patient/<id>``, ``<base>/Patient/<id>`` or ``<id>``."""
    value = text.strip()
    if "/" in value:
        *head, kind, value = value.rsplit("/", 2)
        if kind != resource_type:
            raise bad(f"{name} must refer to a {resource_type}, not {text[:60]!r}.")
    if not ID.fullmatch(value):
        raise bad(f"{name}: {text[:60]!r} is not a {resource_type} id.")
    return value


def parse_int(name: str, text: str, *, low: int, high: int) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise bad(f"{name} must be a whole number, not {text[:20]!r}.") from None
    if value < low:
        raise bad(f"{name} must be at least {low}.")
    return min(value, high)


@dataclass
class Search:
    """A search as asked: each supported parameter's values (repeats are ANDed, commas
    within one value ORed), paging, and what was ignored."""

    values: dict[str, list[str]]
    count: int = DEFAULT_COUNT
    offset: int = 0
    cursor: str | None = None
    ignored: list[str] = field(default_factory=list)

    def all(self, name: str) -> list[str]:
        return self.values.get(name, [])

    def one(self, name: str) -> str | None:
        found = self.all(name)
        if len(found) > 1:
            raise bad(f"Give {name} once.")
        return found[0] if found else None

    def choices(self, name: str, allowed: Iterable[str]) -> set[str] | None:
        """The codes a token parameter allows (None: not given); an unknown code → 400."""
        given = self.all(name)
        if not given:
            return None
        allowed = tuple(allowed)
        chosen: set[str] | None = None
        for value in given:
            codes = {parse_token(v.strip())[1] for v in value.split(",")}
            unknown = sorted(c for c in codes if c not in allowed)
            if unknown:
                raise bad(f"{name}: {', '.join(unknown)[:60]} is not one of {', '.join(allowed)}.")
            chosen = codes if chosen is None else chosen & codes
        return chosen

    def query(self, **paging: int | str | None) -> str:
        """The query string of this search (parameters used) with other paging."""
        pairs = [(k, v) for k, vs in sorted(self.values.items()) for v in vs]
        pairs += [(k, str(v)) for k, v in paging.items() if v is not None]
        return urlencode(pairs)


def _check_text(name: str, items: list[str]) -> None:
    """The API's rules for text (no control or text-direction characters) and a bound on
    length: a value breaking them is a 400 naming the parameter, never passed on."""
    limit = MAX_CURSOR_LENGTH if name == "_cursor" else MAX_VALUE_LENGTH
    for value in items:
        if len(value) > limit:
            raise bad(f"{name[:40]!r}: at most {limit} characters.")
        error = text_error(value)
        if error is not None:
            raise bad(f"{name[:40]!r}: {error}")


def parse(query: QueryDict, supported: Iterable[str], *, strict: bool) -> Search:
    """The search of a query string against the parameters ``supported`` by the type."""
    supported = set(supported)
    values: dict[str, list[str]] = {}
    ignored: list[str] = []
    for raw_name in query:
        name, _, modifier = raw_name.partition(":")
        items = query.getlist(raw_name)
        _check_text(name, [raw_name, *items])  # the name is echoed among the ignored ones
        if name in COMMON or name in supported:
            if modifier:
                raise bad(
                    f"The :{modifier[:20]} modifier is not supported on {name}.", "not-supported"
                )
            if name in supported:
                values[name] = [v for v in items]
            continue
        if strict:
            raise bad(
                f"The search parameter {raw_name[:40]!r} is not supported here.", "not-supported"
            )
        ignored.append(raw_name[:40])
    fmt = query.get("_format")
    if fmt is not None and fmt.split(";")[0].strip() not in JSON_FORMATS:
        raise FhirError(406, "not-supported", "Only JSON is served (_format=json).")
    search = Search(values, ignored=ignored)
    if "_count" in query:
        search.count = parse_int("_count", query["_count"], low=0, high=MAX_COUNT)
    if "_offset" in query:
        search.offset = parse_int("_offset", query["_offset"], low=0, high=MAX_OFFSET)
    search.cursor = query.get("_cursor") or None
    for name, items in values.items():
        if any(not v.strip() for v in items):
            raise bad(f"{name} needs a value.")
    return search
