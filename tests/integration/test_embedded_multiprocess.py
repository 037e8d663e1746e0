"""Several processes write one embedded store file at once while this one reads the feed.

What must hold, as on Cosmos DB: every write gets its own feed position; a concurrent feed
reader sees every committed document, each once, in position order per feed range, and
nothing is missing once the writers stop; optimistic-concurrency conflicts come back as 412
(never as a lost update or a half-applied batch); the file stays intact.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from pathlib import Path
from typing import Any

import pytest

from cosmos_backend import errors
from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import BatchOp, ContainerSpec

pytestmark = pytest.mark.integration
SPEC = ContainerSpec(name="mp", default_ttl=-1)
WRITERS, BATCHES, PER_BATCH, INCREMENTS = 4, 60, 3, 20


def _writer(path: str, n: int, out: str, stale: str, start: Any) -> None:
    """Write create-once batches, fight over a shared counter, try batches doomed to fail."""
    store = EmbeddedStore(path, SPEC)
    written: list[tuple[str, str, int]] = []
    conflicts = doomed_refused = 0
    for b in range(BATCHES):
        pk = f"P_{n}_{b % 5}"
        docs = store.execute_batch(pk, [BatchOp.create({"id": f"d{b}-{i}", "partitionKey": pk,
                                                         "w": n}) for i in range(PER_BATCH)])
        written += [(d["partitionKey"], d["id"], d["_lsn"]) for d in docs if d is not None]
        if b % 10 == 0:
            # 'target' changed after this etag was read, so the replace fails: the
            # create before it in the batch must not survive.
            try:
                store.execute_batch("P_shared", [
                    BatchOp.create({"id": f"doomed-{n}-{b}", "partitionKey": "P_shared"}),
                    BatchOp.replace({"id": "target", "partitionKey": "P_shared", "by": n},
                                    if_match=stale)])
            except errors.BatchFailed as exc:
                assert isinstance(exc.cause, errors.PreconditionFailed), exc
                assert exc.index == 1
                doomed_refused += 1
            store.upsert({"id": "target", "partitionKey": "P_shared", "by": n, "b": b})
    start.wait()  # all writers reach the counter together, so they really collide
    for _ in range(INCREMENTS):
        while True:
            doc = store.read("P_shared", "counter")
            time.sleep(0.0005)  # a read-modify-write takes time in real code too
            body = {k: v for k, v in doc.items() if not k.startswith("_")}
            try:
                store.replace({**body, "n": doc["n"] + 1}, if_match=doc["_etag"])
                break
            except errors.PreconditionFailed:
                conflicts += 1
    Path(out).write_text(json.dumps({"written": written, "conflicts": conflicts,
                                     "doomed_refused": doomed_refused}))


def test_it_keeps_every_write_and_a_gapless_ordered_feed_across_processes(
        tmp_path: Path) -> None:
    path = str(tmp_path / "mp.sqlite3")
    store = EmbeddedStore(path, SPEC)
    store.create({"id": "counter", "partitionKey": "P_shared", "n": 0})
    stale = store.create({"id": "target", "partitionKey": "P_shared"})["_etag"]
    store.upsert({"id": "target", "partitionKey": "P_shared", "v": 1})
    ctx = mp.get_context("spawn")
    outs = [str(tmp_path / f"w{n}.json") for n in range(WRITERS)]
    start = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=_writer, args=(path, n, outs[n], stale, start))
             for n in range(WRITERS)]
    for p in procs:
        p.start()

    seen: list[tuple[str, str, int]] = []
    tokens: dict[str, str | None] = {}
    last_lsn: dict[str, int] = {}

    def drain() -> None:
        for feed_range in store.feed_ranges():
            while True:
                page = store.read_feed(feed_range, continuation=tokens.get(feed_range),
                                       max_items=97)
                for doc in page.items:
                    # Strictly increasing per range across pages and reads: nothing earlier
                    # can show up after something later.
                    assert doc["_lsn"] > last_lsn.get(feed_range, 0), (feed_range, doc)
                    last_lsn[feed_range] = doc["_lsn"]
                    seen.append((doc["partitionKey"], doc["id"], doc["_lsn"]))
                tokens[feed_range] = page.continuation
                if not page.items:
                    break

    drains = 0
    while any(p.is_alive() for p in procs):
        drain()  # concurrently with the writers
        drains += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    drain()

    reports = [json.loads(Path(o).read_text()) for o in outs]
    written = [tuple(w) for r in reports for w in r["written"]]
    assert len(written) == WRITERS * BATCHES * PER_BATCH
    lsns = [lsn for _, _, lsn in written]
    assert len(set(lsns)) == len(lsns)  # every write has its own feed position

    # Create-once documents: each seen exactly once, at the position its writer was given.
    once = [s for s in seen if s[0] != "P_shared"]
    assert sorted(once) == sorted(written)

    # Nothing missing at the end: the feed reached the newest row of every range.
    conn = store._conn()
    rows = conn.execute(f"SELECT pk, id, lsn FROM {store.table}").fetchall()
    assert {(pk, doc_id) for pk, doc_id, _ in rows} == {(pk, doc_id) for pk, doc_id, _ in seen}
    assert max(lsn for _, _, lsn in rows) == max(last_lsn.values())

    # Conflicts were refused, not lost or half applied.
    assert store.read("P_shared", "counter")["n"] == WRITERS * INCREMENTS
    assert sum(r["conflicts"] for r in reports) > 0  # the 412 path was really taken
    assert sum(r["doomed_refused"] for r in reports) == WRITERS * (BATCHES // 10)
    assert not [s for s in seen if s[1].startswith("doomed-")]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert drains > 1  # the reader really ran while the writers were writing
