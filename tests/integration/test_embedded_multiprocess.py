"""Several processes write one embedded store file at once while another reads the feed."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from cosmos_backend import errors
from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.store import BatchOp, ContainerSpec

pytestmark = pytest.mark.integration
SPEC = ContainerSpec(name="mp", default_ttl=-1)
WRITERS, BATCHES = 4, 60


def _writer(path: str, n: int) -> None:
    store = EmbeddedStore(path, SPEC)
    for b in range(BATCHES):
        pk = f"P_{n}_{b % 5}"
        store.execute_batch(pk, [BatchOp.upsert({"id": f"d{b}-{i}", "partitionKey": pk,
                                                 "w": n}) for i in range(3)])
    # Everyone fights over one shared counter: conflicts must surface as 412, never corrupt.
    for _ in range(20):
        while True:
            doc = store.read("P_shared", "counter")
            try:
                store.replace({**{k: v for k, v in doc.items() if not k.startswith("_")},
                               "n": doc["n"] + 1}, if_match=doc["_etag"])
                break
            except errors.PreconditionFailed:
                continue


def test_it_keeps_every_write_and_a_gapless_feed_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "mp.sqlite3")
    store = EmbeddedStore(path, SPEC)
    store.create({"id": "counter", "partitionKey": "P_shared", "n": 0})
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, n)) for n in range(WRITERS)]
    for p in procs:
        p.start()
    seen: dict[tuple[str, str], int] = {}
    tokens: dict[str, str | None] = {}
    positions: list[int] = []

    def drain() -> None:
        for feed_range in store.feed_ranges():
            while True:
                page = store.read_feed(feed_range, continuation=tokens.get(feed_range))
                for doc in page.items:
                    seen[(doc["partitionKey"], doc["id"])] = doc["_lsn"]
                    positions.append(doc["_lsn"])
                tokens[feed_range] = page.continuation
                if not page.items:
                    break

    while any(p.is_alive() for p in procs):
        drain()  # concurrently with the writers
    for p in procs:
        p.join()
        assert p.exitcode == 0
    drain()
    expected = {(f"P_{n}_{b % 5}", f"d{b}-{i}") for n in range(WRITERS) for b in range(BATCHES)
                for i in range(3)}
    assert expected <= set(seen)  # nothing lost
    assert store.read("P_shared", "counter")["n"] == WRITERS * 20  # no lost update
    assert store.count() == len(expected) + 1
    # Latest-version feed: each document's last position is unique across the store.
    final = {v for v in seen.values()}
    assert len(final) == len(seen)
