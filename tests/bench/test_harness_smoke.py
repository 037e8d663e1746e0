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


def test_it_records_measured_request_charges_on_a_cosmos_endpoint(
        tmp_path: Path, wire_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--cosmos`` repeats the per-command counts through the real azure-cosmos SDK and
    keeps the charges the endpoint reports (the wire server charges 1 RU per response)."""
    from tests.conftest import WIRE_KEY

    monkeypatch.setenv("COSMOS_ENDPOINT", wire_endpoint)
    monkeypatch.setenv("COSMOS_KEY", WIRE_KEY)
    result = compare.main(["--smoke", "--sizes", "50", "--systems", "product", "--cosmos",
                           "--out", str(tmp_path), "--docs", str(tmp_path / "docs")])
    prep = json.loads(result.read_text())["sizes"]["50"]["product"]["prep"]
    measured = prep["cosmos_measured"]["costs"]
    for name in ("register", "admit", "discharge"):
        row = measured[name]
        # One charge per response: as many RU as the request's and the projection's calls.
        assert row["sync_ru_measured"] >= row["sync_round_trips"] > 0
        assert row["async_ru_measured"] > 0
    assert "**Measured** request charges" in (tmp_path / "docs" / "BENCHMARKS.md").read_text()
