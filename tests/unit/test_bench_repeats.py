"""How the comparison folds its rounds: the systems' turns, each system's medians, and the
product's ratio to the best baseline of the same round. The smoke test
(tests/bench/test_harness_smoke.py) runs one real round; these run the folding over several."""

from __future__ import annotations

import pytest

from bench.repeats import median_tree, ratios, turns

pytestmark = pytest.mark.unit


def _round(p50: float, rate: float, mb: float, errors: list[str] | None = None) -> dict:
    return {"throughput_wide": {"under_load": {"p50_ms": p50, "n": 9},
                                "commands_per_s": rate, "errors": errors or []},
            "memory": {"peak_total_mb": mb}, "label": f"p50 {p50}"}


def test_each_round_starts_one_system_later() -> None:
    assert turns(["product", "sqlite", "postgresql"], 4) == [
        ["product", "sqlite", "postgresql"], ["sqlite", "postgresql", "product"],
        ["postgresql", "product", "sqlite"], ["product", "sqlite", "postgresql"]]
    assert turns(["product"], 2) == [["product"], ["product"]]
    assert turns(["product", "sqlite"], 0) == []


def test_a_systems_rounds_fold_into_medians_errors_joined_and_the_rest_from_the_first() -> None:
    rounds = [_round(10.0, 100.0, 300.0, ["a"]), _round(30.0, 80.0, 310.0),
              _round(20.0, 90.0, 290.0, ["b", "c"])]
    folded = median_tree(rounds)
    assert folded["throughput_wide"]["under_load"] == {"p50_ms": 20.0, "n": 9}
    assert folded["throughput_wide"]["commands_per_s"] == 90.0
    assert folded["memory"]["peak_total_mb"] == 300.0
    assert folded["throughput_wide"]["errors"] == ["a", "b", "c"]
    assert folded["label"] == "p50 10.0"
    two = median_tree([_round(10.0, 100.0, 300.0), _round(15.0, 90.0, 301.0)])
    assert two["throughput_wide"]["under_load"]["p50_ms"] == 12.5
    assert median_tree([{"n": 3}, {"n": 4}]) == {"n": 3.5}
    assert median_tree([{"n": 3}, {"n": 5}]) == {"n": 4}  # ints stay ints when they can


def test_ratios_take_the_best_baseline_of_the_same_round() -> None:
    runs = {"product": [_round(12.0, 90.0, 600.0), _round(8.0, 110.0, 620.0)],
            "sqlite": [_round(10.0, 100.0, 300.0), _round(10.0, 100.0, 320.0)],
            "postgresql": [_round(6.0, 80.0, 400.0), _round(16.0, 120.0, 410.0)]}
    out = ratios(runs)
    p50 = out["command_p50_8"]  # lower is better: the lowest baseline of each round
    assert p50["values"] == [2.0, 0.8] and p50["vs"] in ("postgresql", "sqlite")
    assert (p50["min"], p50["median"], p50["max"]) == (0.8, 1.4, 2.0)
    rate = out["throughput_8"]  # higher is better: the highest baseline of each round
    assert rate["values"] == [0.9, pytest.approx(110 / 120, abs=0.001)]
    assert out["memory"]["values"] == [2.0, pytest.approx(620 / 320, abs=0.001)]
    assert out["memory"]["vs"] == "sqlite" and out["memory"]["better"] == "lower"
    assert "mix_page_p99" not in out  # measured by no round: no ratio at all


def test_a_round_a_side_did_not_measure_is_left_out() -> None:
    runs = {"product": [_round(12.0, 90.0, 600.0), {"memory": {"peak_total_mb": 500.0}}],
            "sqlite": [_round(10.0, 100.0, 300.0)]}
    out = ratios(runs)
    assert out["command_p50_8"]["values"] == [1.2]  # the second round has no baseline
    assert out["memory"]["values"] == [2.0]
    assert ratios({"product": [_round(1.0, 1.0, 1.0)]}) == {}  # no baseline at all
