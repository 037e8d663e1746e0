"""Keeps the store benchmark harness working (tiny sizes; numbers are not asserted)."""

from __future__ import annotations

import pytest

from bench import store_bench

pytestmark = pytest.mark.bench


def test_it_runs_the_store_benchmark_in_quick_mode() -> None:
    report = store_bench.run(quick=True)
    names = [r["name"] for r in report["results"]]
    assert len(names) == 5
    feed = report["results"][-1]
    assert feed["docs"] > 5_000  # the feed saw every document written
