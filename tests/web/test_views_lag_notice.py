"""The freshness notice's words for each state of the views' lag: staff read how far behind
in time; how many events are not yet sent is shown to admins only (``show_timings``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.template.loader import render_to_string


def _notice(lag: dict[str, Any], *, admin: bool = False) -> str:
    page = render_to_string("worklists/_lag.html", {"lag": lag, "show_timings": admin})
    found = re.search(r'<span class="lag">(.*?)</span>', page, re.S)
    assert found, page
    return " ".join(found.group(1).split())


@pytest.mark.parametrize(("lag", "staff", "admin"), [
    ({"pending": 0, "ms": 0}, "up to date", "up to date"),
    ({"pending": None}, "freshness unknown: recent changes may not show",
     "freshness unknown: recent changes may not show"),
    ({"pending": 3, "ms": 420.4}, "420 ms behind", "420 ms behind (3 events not yet sent)"),
    ({"pending": 1, "ms": 2600.0}, "3 s behind", "3 s behind (1 event not yet sent)"),
    ({"pending": 40, "ms": None, "seconds": 12, "ranges": 2, "capped": True}, "12 s behind",
     "12 s behind (40+ events not yet sent)"),
])
def test_the_notice_says_the_lag_in_time_and_only_admins_read_event_counts(
        lag: dict[str, Any], staff: str, admin: str) -> None:
    assert _notice(lag) == staff
    assert _notice(lag, admin=True) == admin
