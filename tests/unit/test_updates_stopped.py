"""When the pages say their updates stopped (``worklists.read.lag.stopped_since``): pure logic
over the relay's lag, the held streams and the leases, as read a moment ago."""

from __future__ import annotations

import pytest

from worklists.read.lag import STOPPED_AFTER, stopped_since

pytestmark = pytest.mark.unit


class NoLeases:
    """A lease store with no lease yet (a relay not started: not a stop)."""

    def all(self) -> list:
        return []


def test_a_page_handed_over_and_not_projected_for_long_stops_the_updates() -> None:
    """Every event was sent (nothing pending at the relay), but no worker has projected a
    page for 45 s: the views have stopped following the record, and the pages say so."""
    lag = {"pending": 0, "seconds": 0.0, "ms": 45_000.0}
    assert stopped_since(lag, [], NoLeases(), now=1_000.0) == 45


def test_a_lag_under_the_stop_is_only_behind_and_no_lag_read_is_not_a_stop() -> None:
    behind = {"pending": 0, "seconds": 0.0, "ms": STOPPED_AFTER * 1000 - 1}
    assert stopped_since(behind, [], NoLeases(), now=1_000.0) is None
    unknown = {"pending": 0, "seconds": 0.0, "ms": None}  # no relay published it lately
    assert stopped_since(unknown, [], NoLeases(), now=1_000.0) is None


def test_events_the_relay_has_not_sent_for_long_still_stop_the_updates() -> None:
    lag = {"pending": 3, "seconds": 31.0, "ms": 0.0}
    assert stopped_since(lag, [], NoLeases(), now=1_000.0) == 31
