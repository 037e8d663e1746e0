"""Render ``docs/BENCHMARKS.md`` (tables + PNG plots) from the last two suite results.

    python -m bench.report            # re-render from bench/results/suite-*.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.counting import COST_MODEL

ROOT = Path(__file__).resolve().parent.parent
LABEL = {"product": "product", "sqlite": "ORM + SQLite", "postgresql": "ORM + PostgreSQL"}
WORKLISTS = ("admitted", "admitted_ward", "active_orders", "my_orders", "name_search")
# Patient search by name prefix is read like a worklist (one view partition) but is a lookup
# that a relational index answers just as directly; the 2× target is for the worklists.
SEARCHES = ("name_search",)
CAVEATS = [
    "- The product does more per command than the baseline: an MRN reservation in its own "
    "partition, bed reservations, reference-data validation of every code, Idempotency-Key "
    "support, ETag checks, full event payloads for the audit trail. The baseline does what a "
    "careful Django team would do first: one transaction, the patient row locked, database "
    "constraints for one active stay and one patient per bed, an audit row per command.",
    "- The baseline's worklists build model instances (`select_related`), as typical Django "
    "API views do; hand-tuned `.values()` queries would narrow the read gap somewhat. The "
    "product returns view rows stored ready to show, which is the point of its design.",
    "- Both APIs run the same request plumbing: django-ninja with an orjson renderer, and a "
    "bearer-token lookup (with the user's groups) remembered for 5 s per process, so the "
    "read numbers compare data access, not framework settings.",
    "- Only first pages are timed. The baseline pages with OFFSET (deep pages get slower); "
    "the product pages with continuation tokens.",
    "- The baseline's freshness is zero by construction (it reads its own writes); its row in "
    "the freshness table measures the polling round trip, which is also the floor of the "
    "product's numbers.",
    "- Durability is like for like: the embedded store and the SQLite baseline use WAL with "
    "`synchronous=NORMAL`, the PostgreSQL cluster `synchronous_commit=off`.",
    "- Both stacks run one after the other on the same machine, which other work shares; "
    "compare ratios within a run, not absolute numbers between runs.",
    "- RU per command is an estimate from the model above unless a *Measured* table follows "
    "it: `python -m bench.compare --cosmos` with `COSMOS_ENDPOINT` and `COSMOS_KEY` set runs "
    "the same commands on that account and records the service's request charges.",
]


def _f(v: Any, digits: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, float | int):
        return f"{v:,.{digits}f}"
    return str(v)


def _ratio(ours: Any, theirs: Any) -> str:
    if not ours or not theirs:
        return "–"
    return f"{ours / theirs:.2f}×"


def load(results: Path) -> list[dict[str, Any]]:
    files = sorted(results.glob("suite-*.json"))
    return [json.loads(f.read_text()) | {"_file": f.name} for f in files[-2:]]


def baselines(run: dict[str, Any]) -> list[str]:
    return [s for s in run["systems"] if s != "product"]


def best_baseline(entry: dict[str, Any], run: dict[str, Any], pick: Any) -> tuple[str, Any]:
    """The faster baseline for a metric (the comparison the product has to survive)."""
    values = [(s, pick(entry[s])) for s in baselines(run) if s in entry]
    values = [(s, v) for s, v in values if v is not None]
    return min(values, key=lambda x: x[1]) if values else ("", None)


# ------------------------------------------------------------------ plots
def plots(run: dict[str, Any], out: Path) -> list[str]:
    try:
        import matplotlib  # bench-only (requirements-bench.txt): no plots without it

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # after choosing the display-less backend
    except ImportError:
        return []
    out.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    sizes = list(run["sizes"])
    systems = run["systems"]
    largest = run["sizes"][sizes[-1]]

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        names.append(name)

    def grouped_bars(groups: list[str], value: Any, ylabel: str, title: str,
                     name: str) -> None:
        """One bar per system in each group; ``value(system, group)`` is its height."""
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(systems)
        for i, system in enumerate(systems):
            ax.bar([x + i * width for x in range(len(groups))],
                   [value(system, g) for g in groups], width, label=LABEL[system])
        ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(groups))],
                      [g.replace("_", " ") for g in groups])
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend()
        save(fig, name)

    grouped_bars(list(WORKLISTS), lambda s, w: largest[s]["reads"][w]["p50_ms"],
                 "ms (p50, over HTTP)", f"Worklist page, 50 rows, {int(sizes[-1]):,} patients",
                 "worklist-reads.png")
    grouped_bars(list(largest[systems[0]]["commands"]["by_command"]),
                 lambda s, c: largest[s]["commands"]["by_command"][c]["p50_ms"],
                 "ms (p50, one client)", f"Command latency, {int(sizes[-1]):,} patients",
                 "command-latency.png")

    if len(sizes) > 1:
        fig, ax = plt.subplots(figsize=(8, 4))
        for system in systems:
            for w, style in (("admitted", "-"), ("name_search", ":")):
                ax.plot([int(s) for s in sizes],
                        [run["sizes"][s][system]["reads"][w]["p99_ms"] for s in sizes],
                        style, marker="o", label=f"{LABEL[system]}: {w.replace('_', ' ')}")
        ax.set_xscale("log")
        ax.set_xlabel("patients")
        ax.set_ylabel("ms (p99)")
        ax.set_title("Worklist page p99 by data size")
        ax.legend(fontsize=7)
        save(fig, "reads-by-size.png")

    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.bar([LABEL[s] for s in systems], [largest[s]["memory"]["peak_total_mb"] for s in systems])
    ax.set_ylabel("MB (peak PSS, all processes)")
    ax.set_title("Memory")
    save(fig, "memory.png")
    return names


def command_table(run: dict[str, Any]) -> list[str]:
    systems = run["systems"]
    lines = ["| patients | metric | " + " | ".join(LABEL[s] for s in systems)
             + " | product ÷ best baseline |", "|---|---|" + "---|" * (len(systems) + 1)]
    for size, entry in run["sizes"].items():
        for metric, pick in (
            ("p50 ms (1 client)", lambda r: r["commands"]["all"]["p50_ms"]),
            ("p99 ms (1 client)", lambda r: r["commands"]["all"]["p99_ms"]),
            ("p50 ms (4 clients)", lambda r: r["throughput"]["under_load"]["p50_ms"]),
            ("p99 ms (4 clients)", lambda r: r["throughput"]["under_load"]["p99_ms"]),
            ("commands/s (4 clients)", lambda r: r["throughput"]["commands_per_s"]),
        ):
            vals = [pick(entry[s]) for s in systems]
            if "commands/s" in metric:
                best = max((pick(entry[s]) for s in baselines(run)), default=None)
            else:
                best = best_baseline(entry, run, pick)[1]
            lines.append(f"| {int(size):,} | {metric} | " + " | ".join(_f(v) for v in vals)
                         + f" | {_ratio(vals[0], best)} |")
    return lines


def by_command_table(run: dict[str, Any], size: str) -> list[str]:
    systems = run["systems"]
    entry = run["sizes"][size]
    lines = ["| command | " + " | ".join(f"{LABEL[s]} p50 / p99" for s in systems) + " |",
             "|---|" + "---|" * len(systems)]
    for name in entry[systems[0]]["commands"]["by_command"]:
        cells = []
        for s in systems:
            c = entry[s]["commands"]["by_command"].get(name, {})
            cells.append(f"{_f(c.get('p50_ms'))} / {_f(c.get('p99_ms'))}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def reads_table(run: dict[str, Any]) -> list[str]:
    systems = run["systems"]
    lines = ["| patients | worklist | rows | " + " | ".join(
        f"{LABEL[s]} p50 / p99" for s in systems) + " | product ÷ best baseline (p50 / p99) |",
        "|---|---|---|" + "---|" * (len(systems) + 1)]
    for size, entry in run["sizes"].items():
        for w in WORKLISTS:
            cells = [f"{_f(entry[s]['reads'][w]['p50_ms'], 2)} / "
                     f"{_f(entry[s]['reads'][w]['p99_ms'], 2)}" for s in systems]
            ours = entry["product"]["reads"][w] if "product" in entry else {}
            b50 = best_baseline(entry, run, lambda r, w=w: r["reads"][w]["p50_ms"])[1]
            b99 = best_baseline(entry, run, lambda r, w=w: r["reads"][w]["p99_ms"])[1]
            rows = entry[systems[0]]["reads"][w]["rows_mean"]
            lines.append(f"| {int(size):,} | {w.replace('_', ' ')} | {_f(rows, 0)} | "
                         + " | ".join(cells) + f" | {_ratio(ours.get('p50_ms'), b50)} / "
                         f"{_ratio(ours.get('p99_ms'), b99)} |")
    return lines


def freshness_table(run: dict[str, Any]) -> list[str]:
    lines = ["| patients | system | rate (target / achieved) | p50 ms | p99 ms | max ms | "
             "not visible |", "|---|---|---|---|---|---|---|"]
    for size, entry in run["sizes"].items():
        for s in run["systems"]:
            f = entry[s]["freshness"]
            lines.append(f"| {int(size):,} | {LABEL[s]} | {_f(f['rate_target'], 0)} / "
                         f"{_f(f['rate_achieved'])} | {_f(f['p50_ms'])} | {_f(f['p99_ms'])} | "
                         f"{_f(f['max_ms'])} | {f['not_visible']} |")
    return lines


def cost_table(run: dict[str, Any], size: str) -> list[str]:
    entry = run["sizes"][size]
    costs = entry["product"]["prep"]["costs"] if "product" in entry else {}
    base = {s: entry[s]["prep"]["costs"] for s in baselines(run) if s in entry}
    lines = ["| command | store calls (request) | KB written | KB read | est. RU (request) | "
             "store calls (projection) | est. RU (projection) | est. RU total | "
             + " | ".join(f"SQL statements ({LABEL[s]})" for s in base) + " |",
             "|---|---|---|---|---|---|---|---|" + "---|" * len(base)]
    for name, c in costs.items():
        total = c.get("sync_ru_estimate", 0) + c.get("async_ru_estimate", 0) or None
        lines.append(
            f"| {name} | {_f(c.get('sync_round_trips'))} | "
            f"{_f(c['sync_bytes_written'] / 1024 if 'sync_bytes_written' in c else None)} | "
            f"{_f(c['sync_bytes_read'] / 1024 if 'sync_bytes_read' in c else None)} | "
            f"{_f(c.get('sync_ru_estimate'))} | "
            f"{_f(c.get('async_round_trips'))} | {_f(c.get('async_ru_estimate'))} | "
            f"{_f(total)} | " + " | ".join(_f(b.get(name, {}).get("sync_round_trips"))
                                           for b in base.values()) + " |")
    measured = entry.get("product", {}).get("prep", {}).get("cosmos_measured")
    if measured:
        lines += ["", f"**Measured** request charges on `{measured['endpoint']}` (the "
                  "service's `x-ms-request-charge`, the same commands in a throw-away "
                  "database):", "",
                  "| command | store calls (request) | RU (request) | store calls (projection) "
                  "| RU (projection) | RU total | estimate ÷ measured |",
                  "|---|---|---|---|---|---|---|"]
        for name, c in measured["costs"].items():
            ru = c.get("sync_ru_measured", 0) + c.get("async_ru_measured", 0)
            est = c.get("sync_ru_estimate", 0) + c.get("async_ru_estimate", 0)
            lines.append(f"| {name} | {_f(c.get('sync_round_trips'))} | "
                         f"{_f(c.get('sync_ru_measured'))} | {_f(c.get('async_round_trips'))} | "
                         f"{_f(c.get('async_ru_measured'))} | {_f(ru)} | "
                         f"{_ratio(est, ru) if ru else '–'} |")
    return lines


def memory_table(run: dict[str, Any], size: str) -> list[str]:
    entry = run["sizes"][size]
    lines = ["| system | peak total MB (PSS) | processes (peak PSS MB each) |", "|---|---|---|"]
    for s in run["systems"]:
        m = entry[s]["memory"]
        procs = "; ".join(f"{role}: {', '.join(_f(v, 0) for v in vals)}"
                          for role, vals in m["processes"].items())
        lines.append(f"| {LABEL[s]} | {_f(m['peak_total_mb'], 0)} | {procs} |")
    return lines


# ------------------------------------------------------------------ verdicts
def verdicts(run: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Targets table rows, and plain sentences: where we win, then where we lose."""
    sizes = list(run["sizes"])
    big, small = sizes[-1], sizes[0]
    entry = run["sizes"][big]
    rows: list[str] = []
    wins: list[str] = []
    losses: list[str] = []
    if "product" not in entry or not baselines(run):
        return rows, ["No baseline ran, so there is nothing to compare."]
    p = entry["product"]
    for w in WORKLISTS:
        name, b = best_baseline(entry, run, lambda r, w=w: r["reads"][w]["p50_ms"])
        ours = p["reads"][w]["p50_ms"]
        speedup = b / ours if ours and b else None
        met = speedup is not None and speedup >= 2
        if w in SEARCHES:  # a lookup, not a worklist: measured and reported, no 2× target
            rows.append(f"| patient {w.replace('_', ' ')} at {int(big):,} (a search, not a "
                        f"worklist: no target) | {_f(speedup, 2)}× vs "
                        f"{LABEL.get(name, name)} | reported |")
        else:
            rows.append(f"| worklist {w.replace('_', ' ')} at {int(big):,}: ≥ 2× faster than "
                        f"the best baseline (p50) | {_f(speedup, 2)}× vs "
                        f"{LABEL.get(name, name)} | {'met' if met else 'missed'} |")
        if speedup is not None:
            word = "faster" if speedup >= 1 else "slower"
            factor = speedup if speedup >= 1 else 1 / speedup
            (wins if speedup >= 1 else losses).append(
                f"- {w.replace('_', ' ')} page at {int(big):,} patients: {factor:.1f}× {word} "
                f"than the best baseline, {LABEL[name]} (p50 {ours} ms vs {b} ms).")
    name, b = best_baseline(entry, run, lambda r: r["commands"]["all"]["p50_ms"])
    ours = p["commands"]["all"]["p50_ms"]
    ratio = ours / b if ours and b else None
    rows.append(f"| command latency at {int(big):,}: within 1.5× of the best baseline (p50) | "
                f"{_f(ratio, 2)}× vs {LABEL.get(name, name)} | "
                f"{'met' if ratio and ratio <= 1.5 else 'missed'} |")
    if ratio:
        (wins if ratio <= 1 else losses).append(
            f"- Commands, one client (p50 over all eight kinds): the product takes "
            f"{ratio:.2f}× the time of {LABEL[name]} ({ours} ms vs {b} ms).")
    name, b = best_baseline(entry, run, lambda r: r["throughput"]["under_load"]["p50_ms"])
    ours = p["throughput"]["under_load"]["p50_ms"]
    if ours and b:
        (wins if ours <= b else losses).append(
            f"- Commands under four concurrent clients: p50 {ours} ms against {b} ms for "
            f"{LABEL[name]} ({ours / b:.2f}×); the web server shares two cores with the "
            "worker projecting the same commands' events.")
    tp = p["throughput"]["commands_per_s"]
    btp = max(entry[s]["throughput"]["commands_per_s"] for s in baselines(run))
    (wins if tp >= btp else losses).append(
        f"- Throughput with four clients: {tp} commands/s against {btp} for the best "
        f"baseline ({tp / btp:.2f}×).")
    f = p["freshness"]
    ok = (f["p50_ms"] or 1e9) <= 150 and (f["p99_ms"] or 1e9) <= 1000 and f["rate_target"] >= 50
    rows.append(f"| freshness p50 ≤ 150 ms, p99 ≤ 1 s at 50 commands/s | p50 {_f(f['p50_ms'])} "
                f"ms, p99 {_f(f['p99_ms'])} ms at {_f(f['rate_achieved'])}/s | "
                f"{'met' if ok else ('missed' if f['rate_target'] >= 50 else 'not at 50/s')} |")
    losses.append(f"- Freshness is the price of the design: a committed admission shows in the "
                  f"product's worklist after p50 {f['p50_ms']} ms / p99 {f['p99_ms']} ms; the "
                  "baseline reads its own writes (its row measures one poll round trip).")
    p99_big = p["reads"]["admitted"]["p99_ms"]
    p99_small = run["sizes"][small]["product"]["reads"]["admitted"]["p99_ms"]
    growth = p99_big / p99_small if p99_small else None
    at_100k = int(big) >= 100_000
    rows.append(f"| Admitted page p99 ≤ 20 ms at 100k and ≤ 1.5× its 1k time | "
                f"{_f(p99_big, 2)} ms at {int(big):,}; {_f(growth, 2)}× of {int(small):,} | "
                f"{('met' if p99_big <= 20 and (growth or 0) <= 1.5 else 'missed') if at_100k else 'not run at 100k'} |")
    if len(sizes) > 1:
        reads_big = {w: p["reads"][w]["p50_ms"] for w in WORKLISTS}
        reads_small = {w: run["sizes"][small]["product"]["reads"][w]["p50_ms"]
                       for w in WORKLISTS}
        worst = max(reads_big[w] / reads_small[w] for w in WORKLISTS if reads_small[w])
        (wins if worst <= 1.5 else losses).append(
            f"- Scale: from {int(small):,} to {int(big):,} patients no product worklist page "
            f"changes by more than {worst:.2f}× (p50); each is one partition read from an "
            "index, whatever the size of the hospital.")
    pm = p["memory"]["peak_total_mb"]
    bm = min(entry[s]["memory"]["peak_total_mb"] for s in baselines(run))
    (wins if pm <= bm else losses).append(
        f"- Memory: the product's processes peak at {pm:.0f} MB in total (PSS) against "
        f"{bm:.0f} MB for the smallest baseline ({pm / bm:.1f}×): it runs a Celery worker, a "
        "relay and Redis beside the web server.")
    for s in run["systems"]:
        errors = entry[s]["throughput"].get("errors") or []
        if errors:
            losses.append(f"- {LABEL[s]} failed commands under four clients "
                          f"({len(errors)} client(s) stopped), first: `{errors[0].splitlines()[0][:120]}`.")
    prose = ["**We win:**", "", *(wins or ["- nowhere in this run."]), "",
             "**We lose:**", "", *(losses or ["- nowhere in this run."])]
    return rows, prose


def previous_table(runs: list[dict[str, Any]]) -> list[str]:
    if len(runs) < 2:
        return ["No previous run in `bench/results/` yet."]
    prev, cur = runs
    # Runs before the memory_metric field measured RSS.
    prev_metric = prev.get("memory_metric", "rss")
    metrics_differ = prev_metric != cur.get("memory_metric", "rss")
    lines = [f"Previous: {prev['when']} ({prev['_file']}); this: {cur['when']} "
             f"({cur['_file']}).", "",
             "| patients | system | metric | previous | this run | change |",
             "|---|---|---|---|---|---|"]
    for size, entry in cur["sizes"].items():
        old = prev["sizes"].get(size)
        if not old:
            continue
        for s in cur["systems"]:
            if s not in old:
                continue
            for metric, pick in (
                ("command p50 ms", lambda r: r["commands"]["all"]["p50_ms"]),
                ("commands/s", lambda r: r["throughput"]["commands_per_s"]),
                ("admitted page p99 ms", lambda r: r["reads"]["admitted"]["p99_ms"]),
                ("active orders page p99 ms", lambda r: r["reads"]["active_orders"]["p99_ms"]),
                ("freshness p99 ms", lambda r: r["freshness"]["p99_ms"]),
                ("peak memory MB", lambda r: r["memory"]["peak_total_mb"]),
            ):
                a, b = pick(old[s]), pick(entry[s])
                change = f"{(b - a) / a * 100:+.0f} %" if a and b is not None else "–"
                if metric.startswith("peak memory") and metrics_differ:
                    change = f"not comparable ({prev_metric.upper()} then)"
                lines.append(f"| {int(size):,} | {LABEL[s]} | {metric} | {_f(a)} | {_f(b)} | "
                             f"{change} |")
    return lines


def render(runs: list[dict[str, Any]], images: list[str], image_dir: str) -> str:
    run = runs[-1]
    sizes = list(run["sizes"])
    big = sizes[-1]
    m = run["machine"]
    targets, prose = verdicts(run)
    ph = run["phases"]
    out = [
        "# Benchmarks: the product against the relational alternative", "",
        "Same workload, same machine, same run, over HTTP. The product as deployed on one "
        "machine (`hisadmin.launcher`: gunicorn 2 workers × 4 threads, Celery worker, change-"
        "feed relay, embedded Redis, embedded store) against a baseline a Django team would "
        "build instead (`bench/relational/`: the same domain as ORM models with partial "
        "indexes, JOIN/filter worklist queries, the same API paths and bodies, served by the "
        "same gunicorn command) on SQLite and, when it can run, PostgreSQL.", "",
        f"- Run: {run['when']}; sizes: {', '.join(f'{int(s):,}' for s in sizes)} patients"
        f"{' (quick phases)' if run['quick'] else ''}; systems: "
        f"{', '.join(LABEL[s] for s in run['systems'])}.",
        f"- Machine: {m['cores']} cores ({m['cpu']}), {m['memory_gb']} GB, Python "
        f"{m['python']}, {m['os']}; load average at start {m['load_1m_at_start']} (the "
        "machine is shared: absolute numbers move between runs, ratios within a run are "
        "the point).",
        f"- Command: `{run['command']}` (`make bench`). Re-render: `python -m bench.report`.",
        f"- Phases per system: {ph['seq_iterations']} stays by one client (8 commands each: "
        "register, admit, two orders, assign, ready, administer, discharge), "
        f"{ph['threads']} clients × {ph['thread_iterations']} stays (throughput), "
        f"{ph['fresh_rate']:g} admissions/s for {ph['fresh_seconds']:g} s (freshness), "
        f"{ph['reads']} pages per worklist.", "",
        "Workload (`bench/workload.py`, seeded identically on every system; the product "
        "through its use cases, the baseline with bulk inserts): a 600-bed hospital (4 "
        "departments × 5 wards × 30 beds); 30 % of patients in hospital now, capped at 85 % "
        "occupancy; 40 % with an ended stay; 1–5 orders per stay (medication, lab, imaging; "
        "active ones in every state, a quarter assigned to the nurse whose My Orders is "
        "read); 30 % with an allergy.", "",
        "| patients | current stays | past stays | orders | active orders | commands to seed |",
        "|---|---|---|---|---|---|",
    ]
    for size, entry in run["sizes"].items():
        w = entry["workload"]
        out.append(f"| {int(size):,} | {w['current_stays']:,} | {w['past_stays']:,} | "
                   f"{w['orders']:,} | {w['active_orders']:,} | {w['commands']:,} |")
    out += ["", "## Where we win and where we lose", "", *prose, "",
            "## Targets", "", "| target | measured | status |", "|---|---|---|", *targets, ""]
    out += ["## Worklist reads (50-row first page, over HTTP)", "", *reads_table(run), ""]
    for img in images:
        out.append(f"![{img[:-4]}]({image_dir}/{img})")
    out += ["", "## Commands", "", *command_table(run), "",
            f"By command at {int(big):,} patients (ms, one client):", "",
            *by_command_table(run, big), "",
            "## Freshness (admission committed → visible through the worklist API)", "",
            *freshness_table(run), "",
            "## Store round trips, bytes and estimated Cosmos RU per command", "",
            "Counted in-process through the real API with a metering store wrapper "
            "(`bench/counting.py`); *projection* is the worker's share (the events' "
            "projection into the views), averaged over the commands of a stay. The baseline "
            "column counts SQL statements (BEGIN/COMMIT not included).", "",
            "**RU figures are ESTIMATES from this cost model**, not measurements (against a "
            "Cosmos endpoint the Azure adapter records measured request charges):", ""]
    out += [f"- {k}: {v}" for k, v in COST_MODEL.items()]
    out += ["", *cost_table(run, big), "", f"## Peak memory at {int(big):,} patients", "",
            *memory_table(run, big), "",
            "PSS (proportional set size) splits a page shared by several processes among "
            "them, so forked workers and PostgreSQL's shared buffers are counted once. The "
            "product's total includes the launcher itself (the process `make run` starts and "
            "its per-process supervisors) and the embedded Redis; PostgreSQL's includes its "
            "background processes.", "",
            "## What the comparison does and does not cover", "",
            *CAVEATS, "", "## This run beside the previous one", "",
            *previous_table(runs), "",
            "## Other benchmarks", "",
            "- Embedded store micro-benchmarks: [benchmarks-store.md](benchmarks-store.md) "
            "(`python -m bench.store_bench`).",
            "- Worklist rebuild and page latency by store size, freshness at 50/s in-process: "
            "[benchmarks-worklists.md](benchmarks-worklists.md).", ""]
    return "\n".join(out)


def write(results: Path, docs: Path) -> Path:
    runs = load(results)
    if not runs:
        raise SystemExit("no bench/results/suite-*.json yet: run python -m bench.compare")
    image_dir = "benchmarks"
    docs.mkdir(parents=True, exist_ok=True)  # plots (optional) are not what creates it
    images = plots(runs[-1], docs / image_dir)
    path = docs / "BENCHMARKS.md"
    path.write_text(render(runs, images, image_dir))
    print(f"wrote {path.name} ({len(images)} plots)", flush=True)
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    a = parser.parse_args()
    write(a.results, a.docs)
