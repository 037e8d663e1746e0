"""Keeps the store benchmark harness working (tiny sizes; numbers are not asserted)."""

from __future__ import annotations

import pytest

from bench import store_bench

pytestmark = pytest.mark.bench


@pytest.mark.synthetic_events("made-up events: the store benchmark times batched writes")
def test_it_runs_the_store_benchmark_in_quick_mode() -> None:
    report = store_bench.run(quick=True)
    timings = [r for r in report["results"] if "p50_ms" in r]
    assert len(timings) == 8
    assert all(0 < r["p50_ms"] <= r["p99_ms"] for r in timings)
    assert all("last_page_p99_ms" in r for r in timings if r["name"].startswith("50-item"))
    feed = report["results"][-1]
    assert feed["docs"] >= 5_000 + 1_000  # the feed saw every document written
    assert "cores" in report["machine"]
