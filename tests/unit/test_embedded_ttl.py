"""Embedded TTL with an injected clock: expired items vanish from reads, queries and the feed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cosmos_backend import errors
from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import BatchOp, ContainerSpec, Query


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


StoreMaker = Callable[..., EmbeddedStore]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make(tmp_path: Path, clock: Clock) -> StoreMaker:
    def make(default_ttl: int | None = -1) -> EmbeddedStore:
        spec = ContainerSpec(name=f"ttl{default_ttl}", default_ttl=default_ttl)
        return EmbeddedStore(str(tmp_path / "ttl.sqlite3"), spec, clock=clock)

    return make


def d(doc_id: str, **fields: object) -> dict:
    return {"id": doc_id, "partitionKey": "P_1", **fields}


def visible(store: EmbeddedStore) -> dict[str, list[str]]:
    feed = [doc["id"] for r in store.feed_ranges() for doc in store.read_feed(r).items]
    return {"query": [doc["id"] for doc in store.query_all("P_1", Query())], "feed": sorted(feed)}


def test_it_hides_an_item_once_its_ttl_has_passed(make: StoreMaker, clock: Clock) -> None:
    store = make()
    store.create(d("short", ttl=10))
    store.create(d("forever"))
    clock.now += 9.9
    assert store.read("P_1", "short")["ttl"] == 10
    clock.now += 0.2
    with pytest.raises(errors.NotFound):
        store.read("P_1", "short")
    assert visible(store) == {"query": ["forever"], "feed": ["forever"]}


def test_it_counts_the_ttl_from_the_last_write(make: StoreMaker, clock: Clock) -> None:
    store = make()
    store.create(d("a", ttl=10))
    clock.now += 8
    store.upsert(d("a", ttl=10, v=2))
    clock.now += 8
    assert store.read("P_1", "a")["v"] == 2


def test_it_treats_an_expired_item_as_absent_for_writes(make: StoreMaker, clock: Clock) -> None:
    store = make()
    for doc_id in ("c", "r", "x", "u"):
        store.create(d(doc_id, ttl=5))
    etag = store.read("P_1", "r")["_etag"]
    clock.now += 6
    assert store.create(d("c", v=2))["v"] == 2  # no 409 for an id that has expired
    with pytest.raises(errors.NotFound):
        store.replace(d("r"), if_match=etag)
    with pytest.raises(errors.NotFound):
        store.delete("P_1", "x")
    assert store.upsert(d("u", v=2))["v"] == 2
    with pytest.raises(errors.BatchFailed) as caught:
        store.execute_batch("P_1", [BatchOp.replace(d("r"))])
    assert isinstance(caught.value.cause, errors.NotFound)


def test_it_applies_the_container_default_and_the_item_override(
        make: StoreMaker, clock: Clock) -> None:
    store = make(default_ttl=60)
    store.create(d("default"))
    store.create(d("never", ttl=-1))
    store.create(d("sooner", ttl=5))
    clock.now += 30
    assert visible(store)["query"] == ["default", "never"]
    clock.now += 31
    assert visible(store)["query"] == ["never"]


def test_it_ignores_item_ttl_when_the_container_has_ttl_off(
        make: StoreMaker, clock: Clock) -> None:
    store = make(default_ttl=None)
    store.create(d("a", ttl=1))
    clock.now += 100
    assert store.read("P_1", "a")["id"] == "a"


@pytest.mark.parametrize("ttl", [0, -2, 1.5, "10", True])
def test_it_rejects_a_ttl_cosmos_would_reject(make: StoreMaker, ttl: object) -> None:
    store = make()
    with pytest.raises(errors.InvalidRequest):
        store.create(d("a", ttl=ttl))
    assert store.try_read("P_1", "a") is None


def test_it_purges_expired_rows(make: StoreMaker, clock: Clock) -> None:
    store = make()
    for i in range(5):
        store.create(d(f"e{i}", ttl=1))
    store.create(d("kept"))
    assert store.count() == 6
    clock.now += 2
    assert store.purge_expired() == 5
    assert store.count() == 1
    assert store.purge_expired() == 0


def test_it_changes_etag_and_timestamp_on_every_write(make: StoreMaker, clock: Clock) -> None:
    store = make()
    etags = {store.create(d("a"))["_etag"]}
    for _ in range(3):
        clock.now += 1
        doc = store.upsert(d("a"))
        etags.add(doc["_etag"])
    assert len(etags) == 4
    assert store.read("P_1", "a")["_ts"] == int(clock.now)
