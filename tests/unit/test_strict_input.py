"""The pure rules of strict input: which characters text refuses, and an order's course."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from hisadmin.core.inputs import text_error
from patients.domain.errors import InvalidInput
from patients.domain.orders import course

MADRID = ZoneInfo("Europe/Madrid")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85", "\r", "\u202a", "\u202e",
                                  "\u2066", "\u2069", "\ud800"])
def test_it_refuses_control_direction_and_surrogate_characters(char: str) -> None:
    assert text_error(f"a{char}b") is not None
    assert text_error(f"a{char}b", multiline=True) is not None


def test_it_allows_lines_and_tabs_only_in_multiline_text() -> None:
    for text in ("one\ntwo", "one\r\ntwo", "a\tb"):
        assert text_error(text) is not None
        assert text_error(text, multiline=True) is None
    assert text_error("José Ñúñez — 李 \u200e") is None  # any script, and a plain direction mark


def test_it_keeps_a_course_as_instants_in_utc() -> None:
    assert course("2026-07-01T08:00", "2026-07-01T10:00:00.5+00:00", MADRID) == {
        "startAt": "2026-07-01T06:00:00+00:00", "endAt": "2026-07-01T10:00:00.500000+00:00"}
    assert course(datetime(2026, 1, 1, 8, tzinfo=UTC), None, MADRID) == {
        "startAt": "2026-01-01T08:00:00+00:00", "endAt": None}
    assert course(None, "", UTC) == {"startAt": None, "endAt": None}


@pytest.mark.parametrize(("start", "end", "field"), [
    ("next tuesday", None, "start_at"), ("2026-07-01T08:00" + "0" * 100, None, "start_at"),
    (None, "1899-12-31T00:00", "end_at"), ("2101-01-01", None, "start_at"),
    ("2026-07-02T08:00+02:00", "2026-07-02T07:00+02:00", "end_at"),
])
def test_it_refuses_a_course_no_reader_could_schedule(start: str | None, end: str | None,
                                                      field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        course(start, end, UTC)
    assert refused.value.field == field
