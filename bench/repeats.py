"""Repeats of the comparison: one system's results folded into their medians, and the
product's ratio to the best baseline taken within each repeat, then summarised (median and
spread over the repeats)."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

# (path in a system's result, which way is better, what it is)
RATIOS: dict[str, tuple[tuple[str, ...], str]] = {
    "command_p50_1": (("commands", "all", "p50_ms"), "lower"),
    "command_p50_4": (("throughput", "under_load", "p50_ms"), "lower"),
    "command_p95_4": (("throughput", "under_load", "p95_ms"), "lower"),
    "command_p99_4": (("throughput", "under_load", "p99_ms"), "lower"),
    "command_p50_8": (("throughput_wide", "under_load", "p50_ms"), "lower"),
    "command_p95_8": (("throughput_wide", "under_load", "p95_ms"), "lower"),
    "command_p99_8": (("throughput_wide", "under_load", "p99_ms"), "lower"),
    "throughput_4": (("throughput", "commands_per_s"), "higher"),
    "throughput_8": (("throughput_wide", "commands_per_s"), "higher"),
    "throughput_8_current": (("throughput_wide", "commands_per_s_current"), "higher"),
    "mix_commands_per_s": (("ward_mix", "commands_per_s"), "higher"),
    "mix_command_p50": (("ward_mix", "command_p50_ms"), "lower"),
    "mix_command_p99": (("ward_mix", "command_p99_ms"), "lower"),
    "mix_page_p50": (("ward_mix", "page_p50_ms"), "lower"),
    "mix_page_p99": (("ward_mix", "page_p99_ms"), "lower"),
    "mix_observation_p99": (("ward_mix", "observation_sets", "p99_ms"), "lower"),
    "memory": (("memory", "peak_total_mb"), "lower"),
    **{f"read_{w}": (("reads", w, "p50_ms"), "lower")
       for w in ("admitted", "admitted_ward", "active_orders", "my_orders", "name_search")},
}
# Lists that are concatenated across repeats rather than taken from the first.
CONCATENATED = ("errors",)


def turns(systems: list[str], repeats: int) -> list[list[str]]:
    """The order the systems take their turns in, round by round: each round starts one
    later in the list, so that no system always runs first (on a cold machine) or last."""
    return [systems[r % len(systems):] + systems[:r % len(systems)] for r in range(repeats)]


def dig(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def median_tree(values: list[Any]) -> Any:
    """The repeats of one result folded into one: the median of every number, dicts key by
    key; lists of errors joined, other lists and strings taken from the first repeat."""
    first = values[0]
    if isinstance(first, dict):
        out: dict[str, Any] = {}
        for key in first:
            present = [v[key] for v in values if isinstance(v, dict) and key in v]
            if key in CONCATENATED and all(isinstance(p, list) for p in present):
                out[key] = [e for p in present for e in p][:5]
            else:
                out[key] = median_tree(present)
        return out
    if _number(first):
        numbers = [v for v in values if _number(v)]
        if all(v == numbers[0] for v in numbers):
            return numbers[0]
        m = statistics.median(numbers)
        if all(isinstance(v, int) for v in numbers) and float(m).is_integer():
            return int(m)
        return round(m, 2)
    return first


def ratios(repeats: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """For each metric, the product's value over the best baseline's (the lowest time or
    memory, the highest rate) of the same repeat; then the median and the spread of those
    ratios. A repeat where either side did not measure the metric is left out."""
    product = repeats.get("product") or []
    others = [s for s in repeats if s != "product"]
    out: dict[str, dict[str, Any]] = {}
    for name, (path, better) in RATIOS.items():
        values: list[float] = []
        against: list[str] = []
        for r, ours_run in enumerate(product):
            ours = dig(ours_run, *path)
            theirs = [(s, dig(repeats[s][r], *path)) for s in others if r < len(repeats[s])]
            theirs = [(s, v) for s, v in theirs if _number(v) and v > 0]
            if not _number(ours) or not theirs:
                continue
            pick = min if better == "lower" else max
            s, best = pick(theirs, key=lambda x: x[1])
            values.append(round(ours / best, 3))
            against.append(s)
        if values:
            out[name] = {"median": round(statistics.median(values), 3),
                         "min": min(values), "max": max(values), "values": values,
                         "vs": Counter(against).most_common(1)[0][0], "better": better}
    return out
