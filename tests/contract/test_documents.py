"""Point operations, etags and conflicts."""

from __future__ import annotations

import threading

import pytest

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from tests.contract.conftest import StoreFactory

pytestmark = pytest.mark.contract


def doc(doc_id: str = "a", pk: str = "P_1", **fields: object) -> dict:
    return {"id": doc_id, "partitionKey": pk, **fields}


def test_it_answers_404_for_a_missing_document(store: DocumentStore) -> None:
    with pytest.raises(errors.NotFound):
        store.read("P_1", "missing")


def test_it_answers_409_when_creating_an_existing_id(store: DocumentStore) -> None:
    store.create(doc(v=1))
    with pytest.raises(errors.Conflict):
        store.create(doc(v=2))
    assert store.read("P_1", "a")["v"] == 1


def test_it_keeps_ids_per_partition(store: DocumentStore) -> None:
    store.create(doc(pk="P_1", v=1))
    store.create(doc(pk="P_2", v=2))
    assert (store.read("P_1", "a")["v"], store.read("P_2", "a")["v"]) == (1, 2)


def test_it_changes_the_etag_on_every_write(store: DocumentStore) -> None:
    etags = [store.create(doc(v=1))["_etag"]]
    etags.append(store.replace(doc(v=2))["_etag"])
    etags.append(store.upsert(doc(v=3))["_etag"])
    etags.append(store.replace(doc(v=3))["_etag"])  # same content still gets a new etag
    assert len(set(etags)) == 4
    assert store.read("P_1", "a")["_etag"] == etags[-1]


def test_it_refuses_stale_etags_with_412(store: DocumentStore) -> None:
    first = store.create(doc(v=1))
    second = store.replace(doc(v=2), if_match=first["_etag"])
    with pytest.raises(errors.PreconditionFailed):
        store.replace(doc(v=3), if_match=first["_etag"])
    with pytest.raises(errors.PreconditionFailed):
        store.delete("P_1", "a", if_match=first["_etag"])
    with pytest.raises(errors.PreconditionFailed):
        store.upsert(doc(v=4), if_match=first["_etag"])
    assert store.read("P_1", "a")["_etag"] == second["_etag"]
    store.delete("P_1", "a", if_match=second["_etag"])
    with pytest.raises(errors.NotFound):
        store.read("P_1", "a")


def test_it_answers_404_when_replacing_or_deleting_a_missing_document(
        store: DocumentStore) -> None:
    with pytest.raises(errors.NotFound):
        store.replace(doc())
    with pytest.raises(errors.NotFound):
        store.delete("P_1", "a")


def test_it_lets_exactly_one_of_two_concurrent_writers_win(store_factory: StoreFactory) -> None:
    base = store_factory().create(doc(v=0))
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def writer(value: int) -> None:
        handle = store_factory()
        barrier.wait()
        try:
            handle.replace(doc(v=value), if_match=base["_etag"])
            outcomes.append("won")
        except errors.PreconditionFailed:
            outcomes.append("lost")

    threads = [threading.Thread(target=writer, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["lost", "won"]
    assert store_factory().read("P_1", "a")["v"] in (1, 2)


def test_it_lets_exactly_one_of_two_concurrent_creators_win(
        store_factory: StoreFactory) -> None:
    outcomes: list[str] = []
    barrier = threading.Barrier(2, timeout=60)  # a creator that fails must not hang the other

    def creator(value: int) -> None:
        handle = store_factory()
        barrier.wait()
        try:
            handle.create(doc("same", v=value))
            outcomes.append("created")
        except errors.Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=creator, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict", "created"]


def test_it_returns_system_properties_on_every_write_and_read(store: DocumentStore) -> None:
    written = store.create(doc(v=1))
    read = store.read("P_1", "a")
    for d in (written, read):
        assert isinstance(d["_etag"], str) and d["_etag"]
        assert isinstance(d["_ts"], int)
        assert not {"_rid", "_self", "_attachments"} & d.keys()
    assert read["_etag"] == written["_etag"]


def test_it_creates_on_an_upsert_with_an_etag_when_the_document_is_gone(
        store: DocumentStore) -> None:
    # Cosmos DB evaluates If-Match on upsert only against an existing document; a missing one
    # is created (azure-cosmos-dotnet-v3#1698 documents this as the service's behaviour).
    first = store.create(doc(v=1))
    store.delete("P_1", "a")
    store.upsert(doc(v=2), if_match=first["_etag"])
    assert store.read("P_1", "a")["v"] == 2
    with pytest.raises(errors.PreconditionFailed):  # present again: the etag counts
        store.upsert(doc(v=3), if_match=first["_etag"])
