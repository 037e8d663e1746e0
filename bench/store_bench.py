"""Embedded store benchmarks (the targets of the store issue).

    python -m bench.store_bench            # full: 100k-item partition
    python -m bench.store_bench --quick    # small sizes, seconds (the smoke test uses this)

Measures point reads, a typical command commit (aggregate + stream + event through the unit
of work), 50-item filtered and sorted pages from one large partition (first and deep pages
via continuation) and change-feed read throughput. Prints a table and writes JSON to
``bench/results/store-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import SYSTEM_ACTOR, append_events
from cosmos_backend.store import BatchOp, Cond, ContainerSpec, Query
from cosmos_backend.uow import UnitOfWork

SPEC = ContainerSpec(name="bench", default_ttl=-1, indexing_policy={
    "compositeIndexes": [[{"path": "/QueryWard", "order": "ascending"},
                          {"path": "/QueryName", "order": "ascending"},
                          {"path": "/id", "order": "ascending"}]]})
WARDS = [f"W{i:02d}" for i in range(20)]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn: Any, n: int) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(name: str, samples: list[float], target: str) -> dict[str, Any]:
    return {"name": name, "n": len(samples), "p50_ms": round(pct(samples, 0.5), 4),
            "p99_ms": round(pct(samples, 0.99), 4),
            "mean_ms": round(statistics.fmean(samples), 4), "target": target}


def fill_partition(store: EmbeddedStore, n: int) -> None:
    batch: list[BatchOp] = []
    for i in range(n):
        doc = wrap(doc_id=f"row{i:07d}", pk="V_Big", doc_type="ViewRow",
                   contents={"n": i, "payload": "x" * 200},
                   query_fields={"QueryWard": WARDS[i % len(WARDS)],
                                 "QueryName": f"NAME{(i * 7919) % n:07d}"})
        batch.append(BatchOp.upsert(doc))
        if len(batch) == 100:
            store.execute_batch("V_Big", batch)
            batch = []
    if batch:
        store.execute_batch("V_Big", batch)


def run(quick: bool) -> dict[str, Any]:
    size = 5_000 if quick else 100_000
    reps = 200 if quick else 5_000
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        store = EmbeddedStore(str(Path(tmp) / "bench.sqlite3"), SPEC)
        for i in range(1000):
            store.create(wrap(doc_id="patient", pk=f"P_{i}", doc_type="Patient",
                              contents={"n": i, "name": "x" * 300}))
        results.append(summary("point read (1 KB doc)",
                               timed(lambda i: store.read(f"P_{i % 1000}", "patient"), reps),
                               "p50 <= 0.2 ms"))

        def command(i: int) -> None:
            uow = UnitOfWork(store)
            pk = f"P_cmd{i}"
            uow.add(wrap(doc_id="adm", pk=pk, doc_type="Admission", contents={"i": i}))
            append_events(uow, pk, [("AdmissionStarted", {"i": i})], actor=SYSTEM_ACTOR)
            uow.commit()

        results.append(summary("command commit (aggregate + stream + event, one batch)",
                               timed(command, reps // 2), "p50 <= 1 ms (2-doc batch)"))

        def two_docs(i: int) -> None:
            store.execute_batch(f"P_two{i}", [
                BatchOp.create({"id": "a", "partitionKey": f"P_two{i}", "v": i}),
                BatchOp.create({"id": "b", "partitionKey": f"P_two{i}", "v": i})])

        results.append(summary("2-document batch", timed(two_docs, reps // 2),
                               "p50 <= 1 ms"))

        start = time.perf_counter()
        fill_partition(store, size)
        fill_s = time.perf_counter() - start
        query = Query(where=(Cond("QueryWard", "=", "W07"),), order_by=(("QueryName", "ASC"),))
        tokens: list[str | None] = [None]
        token = None
        for _ in range(20):  # remember continuation tokens to measure deep pages too
            token = store.query("V_Big", query, page_size=50, continuation=token).continuation
            if token is None:
                break
            tokens.append(token)
        results.append(summary(
            f"50-item filtered+sorted page, {size:,}-item partition",
            timed(lambda i: store.query("V_Big", query, page_size=50,
                                        continuation=tokens[i % len(tokens)]), reps),
            "p99 <= 10 ms"))

        total = 0
        start = time.perf_counter()
        for feed_range in store.feed_ranges():
            cont = None
            while True:
                page = store.read_feed(feed_range, continuation=cont, max_items=1000)
                total += len(page.items)
                cont = page.continuation
                if not page.items:
                    break
        feed_s = time.perf_counter() - start
        results.append({"name": "change feed read", "docs": total,
                        "docs_per_s": round(total / feed_s), "target": ">= 20,000 docs/s"})
        store.close()
    return {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "quick": quick,
            "machine": f"{platform.machine()}, {platform.python_version()}, "
                       f"{__import__('os').cpu_count()} cores",
            "partition_fill_s": round(fill_s, 1), "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()
    report = run(args.quick)
    for r in report["results"]:
        if "p50_ms" in r:
            print(f"{r['name']:<58} p50 {r['p50_ms']:>8.3f} ms  p99 {r['p99_ms']:>8.3f} ms"
                  f"   target {r['target']}")
        else:
            print(f"{r['name']:<58} {r['docs_per_s']:>10,} docs/s   target {r['target']}")
    if not args.no_save:
        out = Path(__file__).parent / "results"
        out.mkdir(exist_ok=True)
        name = f"store-{'quick-' if args.quick else ''}{time.strftime('%Y%m%d-%H%M%S')}.json"
        (out / name).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
