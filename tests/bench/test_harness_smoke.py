"""Keeps the product-vs-baseline harness working: both servers, 50 patients, tiny phases,
one round each, and the report it renders (the targets table, older results beside newer
ones). How rounds fold into medians and ratios is tested over several synthetic rounds in
tests/unit/test_bench_repeats.py: a second real round here cost a minute and a half."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from bench import compare
from bench import report as render

pytestmark = [pytest.mark.bench, pytest.mark.timeout(300)]


def test_it_measures_both_systems_and_writes_the_report(tmp_path: Path) -> None:
    result = compare.main(["--smoke", "--sizes", "50", "--systems", "product,sqlite",
                           "--out", str(tmp_path), "--docs", str(tmp_path / "docs")])
    run = json.loads(result.read_text())
    assert run["phases"]["repeats"] == 1
    entry = run["sizes"]["50"]
    for system in ("product", "sqlite"):
        rounds = entry[system]["repeats"]
        assert len(rounds) == 1  # one round each
        assert entry[system]["commands"]["all"]["n"] == 18  # two stays of nine commands
        assert entry[system]["reads"]["admitted"]["rows_mean"] > 0
        assert entry[system]["freshness"]["not_visible"] == 0
        assert entry[system]["memory"]["peak_total_mb"] > 0
        # Two phases under load, four clients then eight, each for its time, stays back to
        # back; the system's result is its round's.
        for key, clients in (("throughput", 4), ("throughput_wide", 8)):
            phase = entry[system][key]
            assert phase["clients"] == clients
            assert phase["errors"] == []
            for r in rounds:
                assert r[key]["seconds"] >= 1.5
                assert r[key]["commands"] == r[key]["under_load"]["n"] == 9 * r[key]["stays"]
                # the views current: the same commands over the phase and its drain
                assert 0 < r[key]["commands_per_s_current"] <= r[key]["commands_per_s"]
            assert phase["commands_per_s"] == rounds[0][key]["commands_per_s"]
            assert phase["under_load"]["p50_ms"] <= phase["under_load"]["p95_ms"] \
                <= phase["under_load"]["p99_ms"]
            assert phase["drain_s"] >= 0
            # Where the cores went: the system's processes and the bench's own.
            cpu = phase["cpu_ms_per_command"]
            assert cpu["bench"] > 0 and sum(cpu.values()) > cpu["bench"], cpu
        # The ward-shift mix: screens polled every kind of page while the clients worked.
        mix = entry[system]["ward_mix"]
        for key in ("screens", "clients", "seconds", "commands_per_s", "command_p50_ms",
                    "command_p99_ms", "page_p50_ms", "page_p99_ms", "freshness_p99_ms"):
            assert mix[key] is not None and mix[key] > 0, key
        assert (mix["screens"], mix["clients"]) == (10, 2)
        assert mix["errors"] == []
        assert set(mix["by_screen"]) == {"admitted_ward", "active_orders", "my_orders",
                                         "bed_board", "mar", "observations_due", "at_risk"}
        sets = mix["observation_sets"]  # the nurses' sets, one per patient in a bed per 4 h
        assert sets["patients"] > 0 and sets["sets"] > 0 and sets["errors"] == []
        assert mix["freshness"]["not_visible"] == 0
    # The product against the baseline, round by round.
    ratios = entry["ratios"]
    for key in ("command_p50_4", "command_p50_8", "throughput_8", "throughput_8_current",
                "mix_page_p99",
                "mix_command_p99", "memory", "read_admitted"):
        assert len(ratios[key]["values"]) == 1, key
        assert ratios[key]["min"] <= ratios[key]["median"] <= ratios[key]["max"]
        assert ratios[key]["vs"] == "sqlite"
    r0, r1 = (entry[s]["repeats"][0]["throughput_wide"]["under_load"]["p50_ms"]
              for s in ("product", "sqlite"))
    assert ratios["command_p50_8"]["values"][0] == pytest.approx(r0 / r1, abs=0.001)
    assert entry["product"]["prep"]["costs"]["register"]["sync_round_trips"] > 0
    report = (tmp_path / "docs" / "BENCHMARKS.md").read_text()
    assert "Where we win and where we lose" in report
    targets = _section(report, "## Targets")
    for target in ("throughput, 4 clients ≥ 1.0×",
                   "throughput, 8 clients, the views current ≥ 1.0×",
                   "command p50 under 4 clients ≤ 1.0×", "command p50 under 8 clients ≤ 1.0×",
                   "ward mix: page p99 ≤ 0.5×", "ward mix: command p99 ≤ 1.5×",
                   "ward mix: freshness p99 ≤ 250 ms",
                   "admitted page ≥ 3× faster at 100k", "my orders page ≥ 3× faster at 100k",
                   "peak memory ≤ 2× the smallest baseline",
                   "freshness p99 ≤ 100 ms at 50 commands/s",
                   "store round trips, single-partition command ≤ 2",
                   "store round trips, command with a bed or the MRN ≤ 3",
                   "store round trips per projected event ≤ 2.5", "rebuild ≥ 10,000 events/s"):
        row = next((line for line in targets if line.startswith(f"| {target}")), None)
        assert row is not None, target
        # Measured in this run and judged, or said not to be (rebuild without an event count,
        # freshness below 50/s, the 100k reads at 50 patients).
        assert any(word in row for word in ("· met", "· **missed**", "not measured",
                                            "(not at 50/s)", "(target at 100k)")), row
    assert "| commands/s, 8 clients |" in report
    assert "## Ward-shift mix" in report and "## Rounds:" in report
    assert "CPU per command under load at" in report
    if importlib.util.find_spec("matplotlib") is not None:  # plots are optional
        assert (tmp_path / "docs" / "benchmarks" / "worklist-reads.png").exists()
        assert (tmp_path / "docs" / "benchmarks" / "throughput.png").exists()

    # A run recorded before the eight-client phase still renders, as the latest run and
    # beside a newer one in the previous-run table.
    older = _strip(run, "throughput_wide", "drain_s", "settle_s", "throughput_clock",
                   "rebuild_events", "ward_mix", "ratios", "repeats", "p95_ms")
    alone = tmp_path / "older"
    alone.mkdir()
    (alone / "suite-20000101-000000.json").write_text(json.dumps(older))
    text = render.render(render.load(alone), [], "benchmarks")  # the tables, no plots
    assert "| throughput, 8 clients, the views current ≥ 1.0× | not measured |" in text
    assert "| ward mix: freshness p99 ≤ 250 ms | not measured |" in text
    (tmp_path / "suite-20000101-000000.json").write_text(json.dumps(older))
    text = render.render(render.load(tmp_path), [], "benchmarks")
    previous = _section(text, "## This run beside the previous one")
    assert any(line.startswith("| 50 | commands/s, 8 clients | – → ") for line in previous)
    assert any("bed turn-over on the clock then" in line for line in previous)


def _section(report: str, heading: str) -> list[str]:
    lines = report.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    return lines[start:end]


def _strip(value: Any, *keys: str) -> Any:
    """``value`` without ``keys`` at any depth (what an older run did not record)."""
    if isinstance(value, dict):
        return {k: _strip(v, *keys) for k, v in value.items() if k not in keys}
    return value


def test_it_records_measured_request_charges_on_a_cosmos_endpoint(
        tmp_path: Path, wire_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--cosmos`` repeats the per-command counts through the real azure-cosmos SDK and
    keeps the charges the endpoint reports (the wire server charges 1 RU per response).
    ``--costs-only``: the seeding and its metering, without the rounds under load (the test
    above runs those)."""
    from tests.conftest import WIRE_KEY

    monkeypatch.setenv("COSMOS_ENDPOINT", wire_endpoint)
    monkeypatch.setenv("COSMOS_KEY", WIRE_KEY)
    result = compare.main(["--smoke", "--sizes", "50", "--systems", "product", "--cosmos",
                           "--costs-only",
                           "--out", str(tmp_path), "--docs", str(tmp_path / "docs")])
    run = json.loads(result.read_text())
    assert result.name.startswith("costs-") and not (tmp_path / "docs").exists()
    prep = run["sizes"]["50"]["product"]["prep"]
    measured = prep["cosmos_measured"]["costs"]
    for name in ("register", "admit", "discharge"):
        row = measured[name]
        # One charge per response: as many RU as the request's and the projection's calls.
        assert row["sync_ru_measured"] >= row["sync_round_trips"] > 0
        assert row["async_ru_measured"] > 0
    assert "**Measured** request charges" in "\n".join(render.cost_table(run, "50"))


def test_the_mix_polls_at_the_pages_own_intervals() -> None:
    """The screens of the ward-shift mix refresh as often as the pages they stand for."""
    from bench.phases import SCREENS
    from patients.pages.beds import REFRESH_SECONDS as BEDS
    from patients.pages.mar import MAR_REFRESH_SECONDS as MAR
    from worklists.pages.worklists import REFRESH_SECONDS as WORKLISTS

    every = {kind: seconds for kind, seconds, _ in SCREENS}
    assert every == {"admitted_ward": WORKLISTS, "active_orders": WORKLISTS,
                     "my_orders": WORKLISTS, "bed_board": BEDS, "mar": MAR,
                     "observations_due": WORKLISTS, "at_risk": WORKLISTS}
    assert sum(share for _, _, share in SCREENS) == pytest.approx(1.0)
