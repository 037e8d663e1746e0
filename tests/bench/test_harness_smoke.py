"""Keeps the product-vs-baseline harness working: both servers, 50 patients, tiny phases."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bench import compare

pytestmark = [pytest.mark.bench, pytest.mark.timeout(180)]


def test_it_measures_both_systems_and_writes_the_report(tmp_path: Path) -> None:
    result = compare.main(["--smoke", "--sizes", "50", "--systems", "product,sqlite",
                           "--out", str(tmp_path), "--docs", str(tmp_path / "docs")])
    run = json.loads(result.read_text())
    entry = run["sizes"]["50"]
    for system in ("product", "sqlite"):
        assert entry[system]["commands"]["all"]["n"] == 16  # two stays of eight commands
        assert entry[system]["reads"]["admitted"]["rows_mean"] > 0
        assert entry[system]["freshness"]["not_visible"] == 0
        assert entry[system]["memory"]["peak_total_mb"] > 0
    assert entry["product"]["prep"]["costs"]["register"]["sync_round_trips"] > 0
    report = (tmp_path / "docs" / "BENCHMARKS.md").read_text()
    assert "Where we win and where we lose" in report
    if importlib.util.find_spec("matplotlib") is not None:  # plots are optional
        assert (tmp_path / "docs" / "benchmarks" / "worklist-reads.png").exists()
