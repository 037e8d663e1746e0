"""TTL: expired documents vanish from reads, queries and the change feed; their ids are free."""

from __future__ import annotations

import time

import pytest

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore, Query
from tests.contract.conftest import Backend, spec

pytestmark = pytest.mark.contract


def wait_until_gone(store: DocumentStore, pk: str, doc_id: str, limit: float = 8.0) -> None:
    deadline = time.monotonic() + limit
    while store.try_read(pk, doc_id) is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert store.try_read(pk, doc_id) is None


def fed_ids(store: DocumentStore) -> list[str]:
    return sorted(d["id"] for r in store.feed_ranges() for d in store.read_feed(r).items)


def test_it_expires_documents_by_their_own_ttl(store: DocumentStore) -> None:
    # 2 s, not 1: _ts has whole-second granularity on Cosmos, so a 1 s item written late in
    # a second may already be gone by the read that follows it on a loaded machine.
    store.create({"id": "short", "partitionKey": "P_1", "ttl": 2, "grp": "A"})
    store.create({"id": "forever", "partitionKey": "P_1", "grp": "A"})
    assert store.try_read("P_1", "short") is not None
    wait_until_gone(store, "P_1", "short")
    assert [d["id"] for d in store.query_all("P_1", Query())] == ["forever"]
    assert fed_ids(store) == ["forever"]
    store.create({"id": "short", "partitionKey": "P_1"})  # the id is free again


def test_it_expires_by_the_container_default_unless_the_item_says_otherwise(
        backend_kit: Backend) -> None:
    store = backend_kit.container(spec(default_ttl=1))()
    store.create({"id": "default", "partitionKey": "P_1"})
    store.create({"id": "kept", "partitionKey": "P_1", "ttl": -1})
    store.create({"id": "longer", "partitionKey": "P_1", "ttl": 60})
    wait_until_gone(store, "P_1", "default")
    assert [d["id"] for d in store.query_all("P_1", Query())] == ["kept", "longer"]
    assert fed_ids(store) == ["kept", "longer"]


def test_it_ignores_item_ttl_when_the_container_has_ttl_off(backend_kit: Backend) -> None:
    store: DocumentStore = backend_kit.container(spec(default_ttl=None))()
    store.create({"id": "a", "partitionKey": "P_1", "ttl": 1})
    time.sleep(1.1)  # past the expiry even where _ts has whole-second granularity
    assert store.read("P_1", "a")["ttl"] == 1


def test_it_restarts_the_clock_on_every_write(store: DocumentStore) -> None:
    # Timings allow for _ts in whole seconds: the create's expiry has passed at the read,
    # the replace's has not.
    store.create({"id": "a", "partitionKey": "P_1", "ttl": 3})
    time.sleep(1.5)
    store.replace({"id": "a", "partitionKey": "P_1", "ttl": 3, "v": 2})
    time.sleep(1.7)
    assert store.read("P_1", "a")["v"] == 2


@pytest.mark.parametrize("ttl", [0, -2, True, "5", 1.5])
def test_it_refuses_a_ttl_cosmos_would_refuse(store: DocumentStore, ttl: object) -> None:
    with pytest.raises(errors.InvalidRequest):
        store.create({"id": "a", "partitionKey": "P_1", "ttl": ttl})
    assert store.try_read("P_1", "a") is None
