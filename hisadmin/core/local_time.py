"""Dates and times as the wards read them: in the hospital's time zone
(``settings.HOSPITAL_TIME_ZONE``), in words ("Wed 25 Nov, 14:00"; the year when it is not
this year; a date alone always with its year, "Wed 25 Nov 2026").

Every page shows an instant through :func:`human_time` and a date through :func:`human_date`
(the ``hospital_time`` template library wraps them); the API keeps ISO 8601 with offsets.
Stored instants are ISO strings in UTC; a value without an offset is taken as UTC, as the
documents keep it (a time *typed* without an offset is read in the hospital's zone at the
edge, :mod:`hisadmin.core.inputs`, before it is stored).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo

from hisadmin.core.inputs import hospital_time_zone

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def to_local(value: object, tz: tzinfo | None = None) -> datetime | None:
    """``value`` (an aware or naive datetime, or ISO text with or without an offset and
    fractions of a second) as an aware datetime in ``tz`` (default: the hospital's zone);
    naive values are UTC. None for nothing or for text that is not an instant."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(tz or hospital_time_zone())


def _day_words(day: date, *, year: bool, weekday: bool = True) -> str:
    text = f"{day.day} {MONTHS[day.month - 1]}"
    text = f"{DAYS[day.weekday()]} {text}" if weekday else text
    return f"{text} {day.year}" if year else text


def human_time(value: object, *, now: datetime | None = None, seconds: bool = False,
               tz: tzinfo | None = None) -> str:
    """An instant in words in the hospital's time: "Wed 25 Nov, 14:00", "Wed 25 Nov 2026,
    14:00" when not in this year (``now``'s, default the clock's), with ":05" seconds when
    asked. "" for nothing; text that is not an instant comes back as it was."""
    local = to_local(value, tz)
    if local is None:
        return "" if value in (None, "") else str(value)
    this_year = (now or datetime.now(UTC)).astimezone(local.tzinfo).year
    clock = local.strftime("%H:%M:%S" if seconds else "%H:%M")
    return f"{_day_words(local.date(), year=local.year != this_year)}, {clock}"


def human_date(value: object, *, weekday: bool = True, tz: tzinfo | None = None) -> str:
    """A date in words, with its year: "Wed 25 Nov 2026" ("1 Jan 1960" without the
    ``weekday``, for a date of birth). A ``date`` or ``YYYY-MM-DD`` is shown as it is; an
    instant (datetime or ISO text) by its day in the hospital's time. "" for nothing; text
    that is neither comes back as it was."""
    if value in (None, ""):
        return ""
    if isinstance(value, date) and not isinstance(value, datetime):
        return _day_words(value, year=True, weekday=weekday)
    if isinstance(value, str) and len(value.strip()) == 10:
        try:
            return _day_words(date.fromisoformat(value.strip()), year=True, weekday=weekday)
        except ValueError:
            return value
    local = to_local(value, tz)
    return str(value) if local is None else _day_words(local.date(), year=True,
                                                         weekday=weekday)


def clock_time(value: object, *, tz: tzinfo | None = None) -> str:
    """The hospital's wall-clock time of an instant, "14:00" (a grid's column, a time on a
    page that already says the day); "" for nothing."""
    local = to_local(value, tz)
    if local is None:
        return "" if value in (None, "") else str(value)
    return local.strftime("%H:%M")


def span(minutes: int) -> str:
    """A stretch of time in words: "45 min", "2 h 5 min" (how late, how long ago)."""
    hours, rest = divmod(max(0, minutes), 60)
    return f"{hours} h {rest} min" if hours else f"{rest} min"
