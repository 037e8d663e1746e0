"""Embedded store benchmarks (the targets of the store issue).

    python -m bench.store_bench            # full: 100k-item partition
    python -m bench.store_bench --quick    # small sizes, seconds (the smoke test uses this)
    python -m bench.store_bench --writes   # only the write costs under the product's policy

Measures point reads (small store and the large one), a typical command commit (aggregate +
stream + event through the unit of work, on a new and on an existing stream), a bare
2-document batch, 50-item filtered and sorted pages from one large partition (every page of
the filter, reached by continuation, ascending and descending) and change-feed read
throughput; and the cost per document of inserting, replacing and deleting view rows and
domain documents in batches of 50 under the product's indexing policy (index upkeep).
Prints a table and writes JSON to ``bench/results/store-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import append_events
from cosmos_backend.store import BatchOp, Cond, ContainerSpec, Query, iter_feed
from cosmos_backend.uow import UnitOfWork

SYSTEM_ACTOR = {"id": "system", "username": "system", "display_name": "System", "roles": []}

SPEC = ContainerSpec(name="bench", default_ttl=-1, indexing_policy={
    "compositeIndexes": [[{"path": "/QueryWard", "order": "ascending"},
                          {"path": "/QueryName", "order": "ascending"},
                          {"path": "/id", "order": "ascending"}],
                         [{"path": "/QueryWard", "order": "ascending"},
                          {"path": "/QueryAdmittedAt", "order": "descending"},
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
                                 "QueryName": f"NAME{(i * 7919) % n:07d}",
                                 "QueryAdmittedAt": f"2026-{(i * 104729) % n:07d}"})
        batch.append(BatchOp.upsert(doc))
        if len(batch) == 100:
            store.execute_batch("V_Big", batch)
            batch = []
    if batch:
        store.execute_batch("V_Big", batch)


def all_tokens(store: EmbeddedStore, query: Query) -> list[str | None]:
    """Continuation tokens of every page of ``query``: pages are measured first to last."""
    tokens: list[str | None] = [None]
    while True:
        token = store.query("V_Big", query, page_size=50, continuation=tokens[-1]).continuation
        if token is None:
            return tokens
        tokens.append(token)


def page_summary(store: EmbeddedStore, name: str, query: Query, reps: int) -> dict[str, Any]:
    tokens = all_tokens(store, query)
    samples = timed(lambda i: store.query("V_Big", query, page_size=50,
                                          continuation=tokens[i % len(tokens)]), reps)
    deepest = timed(lambda i: store.query("V_Big", query, page_size=50,
                                          continuation=tokens[-1]), max(20, reps // 20))
    out = summary(f"{name} ({len(tokens)} pages)", samples, "p99 <= 10 ms")
    out["last_page_p99_ms"] = round(pct(deepest, 0.99), 4)
    return out


def feed_throughput(store: EmbeddedStore) -> dict[str, Any]:
    total = 0
    start = time.perf_counter()
    for feed_range in store.feed_ranges():
        for page in iter_feed(store, feed_range, max_items=1000):
            total += len(page.items)
    seconds = time.perf_counter() - start
    return {"name": "change feed read (all ranges, 1000 per page)", "docs": total,
            "docs_per_s": round(total / seconds), "target": ">= 20,000 docs/s"}


def product_policy() -> dict[str, Any]:
    """The product container's indexing policy, as the apps register it at start."""
    from hisadmin.core.store import indexing_policy, register_indexes
    from patients.persistence.documents import COMPOSITE_INDEXES as RECORD_INDEXES
    from worklists.projection.schema import COMPOSITE_INDEXES as VIEW_INDEXES

    register_indexes(RECORD_INDEXES)
    register_indexes(VIEW_INDEXES)
    return indexing_policy()


def view_row(i: int, n: int) -> dict[str, Any]:
    """A row of the census, orders or name-search view, in the shape the projection writes."""
    person = {"QueryName": f"DOE{(i * 7919) % n:06d} JANE", "QueryMrn": f"M{i:07d}",
              "QueryBirth": "1970-01-02", "QuerySex": "female"}
    contents = {"patientId": f"p{i}", "mrn": f"M{i:07d}", "name": "DOE, Jane",
                "birthDate": "1970-01-02", "sex": "female", "wardId": f"W{i % 9}",
                "bed": str(i % 30), "departmentId": "CARD"}
    kind = i % 3
    if kind == 0:
        query = {**person, "QueryWard": f"W{i % 9}", "QueryBed": f"W{i % 9} {i % 30}",
                 "QueryAdmittedAt": f"2026-01-01T{i:07d}", "QueryAttending": "HOUSE GREGORY"}
        return wrap(doc_id=f"p{i}", pk="V_Admitted_g1_CARD", doc_type="ViewRow",
                    sub_type="Admitted", contents={**contents, "admittedAt": "2026-01-01"},
                    query_fields=query)
    if kind == 1:
        query = {**person, "QueryWard": f"W{i % 9}", "QueryBed": f"W{i % 9} {i % 30}",
                 "QueryKind": "lab", "QueryStatus": "placed", "QueryUrgency": "routine",
                 "QueryPlacedAt": f"2026-01-01T{i:07d}", "QueryAssignee": "",
                 "QueryAssigneeName": "", "QueryDepartment": "CARD"}
        return wrap(doc_id=f"o{i}", pk="V_Orders_g1_CARD", doc_type="ViewRow", sub_type="Orders",
                    contents={**contents, "kind": "lab", "status": "placed",
                              "description": "Full blood count"}, query_fields=query)
    return wrap(doc_id=f"p{i}", pk=f"V_Names_g1_D{i % 20:02d}", doc_type="ViewRow",
                sub_type="Names", contents=contents, query_fields={**person, "QueryGiven": "JANE"})


def domain_doc(i: int) -> dict[str, Any]:
    """An event of a patient's stream (most domain documents are events)."""
    return wrap(doc_id=f"e{i:07d}", pk=f"P_{i // 10}", doc_type="Event", sub_type="OrderPlaced",
                contents={"seq": i % 10, "at": "2026-01-01T10:00:00Z",
                          "data": {"orderId": f"o{i}", "kind": "lab", "urgency": "routine"}})


def write_costs(tmp: str, n: int) -> list[dict[str, Any]]:
    """Microseconds per document to insert, replace and delete ``n`` of each kind, 50 a batch."""
    store = EmbeddedStore(str(Path(tmp) / "writes.sqlite3"),
                          ContainerSpec(name="writes", default_ttl=-1,
                                        indexing_policy=product_policy()))
    out = []
    for label, make in (("view row", lambda i: view_row(i, n)), ("domain document", domain_doc)):
        docs = [make(i) for i in range(n)]
        batches: dict[str, list[dict[str, Any]]] = {}
        for doc in docs:
            batches.setdefault(doc["partitionKey"], []).append(doc)
        groups = [(pk, group[k:k + 50]) for pk, group in batches.items()
                  for k in range(0, len(group), 50)]
        for kind, op in (("insert", BatchOp.create), ("replace", BatchOp.replace),
                         ("delete", lambda d: BatchOp.delete(d["id"]))):
            start = time.perf_counter()
            for pk, group in groups:
                store.execute_batch(pk, [op(d) for d in group])
            per_doc = (time.perf_counter() - start) / n * 1e6
            out.append({"name": f"{label}: {kind}, 50 per batch", "n": n,
                        "us_per_doc": round(per_doc, 1), "target": "-"})
    store.close()
    return out


def run(quick: bool, writes_only: bool = False) -> dict[str, Any]:
    size = 5_000 if quick else 100_000
    reps = 200 if quick else 5_000
    results: list[dict[str, Any]] = []
    fill_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        results += write_costs(tmp, 3_000 if quick else 30_000)
        if writes_only:
            return report(quick, results, fill_s)
        store = EmbeddedStore(str(Path(tmp) / "bench.sqlite3"), SPEC)
        for i in range(1000):
            store.create(wrap(doc_id="patient", pk=f"P_{i}", doc_type="Patient",
                              contents={"n": i, "name": "x" * 800}))
        results.append(summary("point read (1 KB doc)",
                               timed(lambda i: store.read(f"P_{i % 1000}", "patient"), reps),
                               "p50 <= 0.2 ms"))

        def first_command(i: int) -> None:
            uow = UnitOfWork(store)
            pk = f"P_cmd{i}"
            uow.add(wrap(doc_id="adm", pk=pk, doc_type="Admission", contents={"i": i}))
            append_events(uow, pk, [("AdmissionStarted", {"i": i})], actor=SYSTEM_ACTOR)
            uow.commit()

        results.append(summary("command commit, new stream (create aggregate + stream + event)",
                               timed(first_command, reps // 2), "p50 <= 1 ms"))

        commits: list[float] = []

        def next_command(i: int) -> None:
            # The usual shape: load the aggregate and the stream, change both, add an event;
            # one batch with two etag-guarded replaces and a create. Only commit() is timed.
            uow = UnitOfWork(store)
            pk = f"P_cmd{i % (reps // 2)}"
            adm = uow.get(pk, "adm")
            adm["docContents"]["i"] += 1
            uow.update(adm)
            append_events(uow, pk, [("OrderPlaced", {"i": i})], actor=SYSTEM_ACTOR)
            start = time.perf_counter()
            uow.commit()
            commits.append((time.perf_counter() - start) * 1000)

        whole = timed(next_command, reps // 2)
        results.append(summary("command commit, existing stream (2 guarded replaces + event)",
                               commits, "p50 <= 1 ms"))
        results.append(summary("  the same command incl. its 2 point reads and bookkeeping",
                               whole, "-"))

        def two_docs(i: int) -> None:
            store.execute_batch(f"P_two{i}", [
                BatchOp.create({"id": "a", "partitionKey": f"P_two{i}", "v": i}),
                BatchOp.create({"id": "b", "partitionKey": f"P_two{i}", "v": i})])

        results.append(summary("2-document batch", timed(two_docs, reps // 2),
                               "p50 <= 1 ms"))

        start = time.perf_counter()
        fill_partition(store, size)
        fill_s = time.perf_counter() - start
        results.append(summary(f"point read in the {size:,}-item partition",
                               timed(lambda i: store.read("V_Big", f"row{(i * 7919) % size:07d}"),
                                     reps), "p50 <= 0.2 ms"))
        ward = Cond("QueryWard", "=", "W07")
        results.append(page_summary(
            store, f"50-item page, filter + sort ASC, {size:,}-item partition",
            Query(where=(ward,), order_by=(("QueryName", "ASC"),)), reps))
        results.append(page_summary(
            store, f"50-item page, filter + sort DESC, {size:,}-item partition",
            Query(where=(ward,), order_by=(("QueryAdmittedAt", "DESC"),)), reps))
        results.append(feed_throughput(store))
        store.close()
    return report(quick, results, fill_s)


def report(quick: bool, results: list[dict[str, Any]], fill_s: float) -> dict[str, Any]:
    return {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "quick": quick,
            "machine": f"{platform.machine()}, Python {platform.python_version()}, "
                       f"SQLite {sqlite3.sqlite_version}, {os.cpu_count()} cores",
            "partition_fill_s": round(fill_s, 1), "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--writes", action="store_true", help="only the write costs")
    args = parser.parse_args()
    report = run(args.quick, args.writes)
    for r in report["results"]:
        if "us_per_doc" in r:
            print(f"{r['name']:<72} {r['us_per_doc']:>8.1f} us/doc  (n={r['n']:,})")
        elif "p50_ms" in r:
            last = (f"  last page p99 {r['last_page_p99_ms']:.3f} ms"
                    if "last_page_p99_ms" in r else "")
            print(f"{r['name']:<72} p50 {r['p50_ms']:>7.3f} ms  p99 {r['p99_ms']:>7.3f} ms"
                  f"  target {r['target']}{last}")
        else:
            print(f"{r['name']:<72} {r['docs_per_s']:>10,} docs/s  target {r['target']}")
    print(f"{report['machine']}; partition filled in {report['partition_fill_s']} s")
    if not args.no_save:
        out = Path(__file__).parent / "results"
        out.mkdir(exist_ok=True)
        name = f"store-{'quick-' if args.quick else ''}{time.strftime('%Y%m%d-%H%M%S')}.json"
        (out / name).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
