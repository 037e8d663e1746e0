"""Transactional batches: all or nothing within one partition."""

from __future__ import annotations

import threading

import pytest

from cosmos_backend import errors
from cosmos_backend.store import BatchOp, DocumentStore, Query
from tests.contract.conftest import StoreFactory

pytestmark = pytest.mark.contract


def d(doc_id: str, pk: str = "P_1", **fields: object) -> dict:
    return {"id": doc_id, "partitionKey": pk, **fields}


def test_it_applies_a_batch_and_returns_each_document(store: DocumentStore) -> None:
    existing = store.create(d("x", v=1))
    results = store.execute_batch("P_1", [
        BatchOp.create(d("a")),
        BatchOp.replace(d("x", v=2), if_match=existing["_etag"]),
        BatchOp.upsert(d("b")),
    ])
    assert [r["id"] for r in results] == ["a", "x", "b"]  # type: ignore[index]
    assert store.read("P_1", "x")["v"] == 2


def test_it_applies_nothing_when_an_operation_in_the_middle_fails(store: DocumentStore) -> None:
    existing = store.create(d("x", v=1))
    store.replace(d("x", v=2))  # makes `existing["_etag"]` stale
    current = store.read("P_1", "x")
    with pytest.raises(errors.BatchFailed) as failure:
        store.execute_batch("P_1", [
            BatchOp.create(d("a")),
            BatchOp.replace(d("x", v=3), if_match=existing["_etag"]),
            BatchOp.create(d("b")),
        ])
    assert failure.value.index == 1
    assert isinstance(failure.value.cause, errors.PreconditionFailed)
    assert store.try_read("P_1", "a") is None
    assert store.try_read("P_1", "b") is None
    after = store.read("P_1", "x")
    assert (after["v"], after["_etag"]) == (2, current["_etag"])


def test_it_fails_the_batch_on_a_duplicate_create(store: DocumentStore) -> None:
    store.create(d("x"))
    with pytest.raises(errors.BatchFailed) as failure:
        store.execute_batch("P_1", [BatchOp.create(d("a")), BatchOp.create(d("x"))])
    assert (failure.value.index, failure.value.status_code) == (1, 409)
    assert store.try_read("P_1", "a") is None


def test_it_deletes_in_a_batch_under_an_etag(store: DocumentStore) -> None:
    x = store.create(d("x"))
    store.execute_batch("P_1", [BatchOp.delete("x", if_match=x["_etag"]), BatchOp.create(d("y"))])
    assert store.try_read("P_1", "x") is None
    assert store.try_read("P_1", "y") is not None


def test_it_rolls_back_earlier_replaces_and_deletes_when_a_later_operation_fails(
        store: DocumentStore) -> None:
    x = store.create(d("x", v=1))
    y = store.create(d("y", v=1))
    store.create(d("taken"))
    with pytest.raises(errors.BatchFailed) as failure:
        store.execute_batch("P_1", [
            BatchOp.replace(d("x", v=2), if_match=x["_etag"]),
            BatchOp.delete("y", if_match=y["_etag"]),
            BatchOp.upsert(d("z")),
            BatchOp.create(d("taken")),
        ])
    assert (failure.value.index, type(failure.value.cause)) == (3, errors.Conflict)
    after_x, after_y = store.read("P_1", "x"), store.read("P_1", "y")
    assert (after_x["v"], after_x["_etag"]) == (1, x["_etag"])
    assert (after_y["v"], after_y["_etag"]) == (1, y["_etag"])
    assert store.try_read("P_1", "z") is None


def test_it_fails_a_batch_on_a_missing_document_and_a_stale_upsert(store: DocumentStore) -> None:
    x = store.create(d("x", v=1))
    store.replace(d("x", v=2))
    with pytest.raises(errors.BatchFailed) as missing:
        store.execute_batch("P_1", [BatchOp.create(d("a")), BatchOp.replace(d("nope"))])
    assert (missing.value.index, missing.value.status_code) == (1, 404)
    with pytest.raises(errors.BatchFailed) as stale:
        store.execute_batch("P_1", [BatchOp.upsert(d("x", v=3), if_match=x["_etag"])])
    assert (stale.value.index, stale.value.status_code) == (0, 412)
    assert store.try_read("P_1", "a") is None
    assert store.read("P_1", "x")["v"] == 2


def test_it_lets_one_of_two_concurrent_batches_on_one_etag_win(
        store_factory: StoreFactory) -> None:
    base = store_factory().create(d("x", v=0))
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def writer(n: int) -> None:
        handle = store_factory()
        barrier.wait()
        try:
            handle.execute_batch("P_1", [BatchOp.replace(d("x", v=n), if_match=base["_etag"]),
                                         BatchOp.create(d(f"event-{n}"))])
            outcomes.append(f"won-{n}")
        except errors.BatchFailed as exc:
            assert exc.index == 0 and isinstance(exc.cause, errors.PreconditionFailed)
            outcomes.append("lost")

    threads = [threading.Thread(target=writer, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if o.startswith("won")]
    assert len(winners) == 1 and outcomes.count("lost") == 1
    n = int(winners[0].split("-")[1])
    store = store_factory()
    assert store.read("P_1", "x")["v"] == n
    assert store.try_read("P_1", f"event-{3 - n}") is None  # the loser's event never landed


def test_it_returns_nothing_for_deletes_and_documents_for_writes(store: DocumentStore) -> None:
    store.create(d("x"))
    results = store.execute_batch("P_1", [BatchOp.delete("x"), BatchOp.create(d("y", v=1))])
    assert results[0] is None
    assert results[1] is not None and results[1]["v"] == 1 and results[1]["_etag"]


def test_grouped_writes_keep_each_batch_whole_and_apart(store: DocumentStore) -> None:
    # grouped() may commit many batches at once (embedded) or change nothing (Cosmos): on
    # every backend each batch is still all or nothing, and one that fails is undone alone.
    taken = store.create(d("taken", pk="P_2"))
    with store.grouped():
        store.execute_batch("P_1", [BatchOp.create(d("a")), BatchOp.create(d("b"))])
        with pytest.raises(errors.BatchFailed):
            store.execute_batch("P_2", [BatchOp.create(d("c", pk="P_2")),
                                        BatchOp.create(d("taken", pk="P_2"))])
        store.upsert(d("e", pk="P_3"))
        assert store.read("P_1", "a")["id"] == "a"  # the block reads its own writes
    assert [x["id"] for x in store.query_all("P_1", Query())] == ["a", "b"]
    assert store.try_read("P_2", "c") is None
    assert store.read("P_2", "taken")["_etag"] == taken["_etag"]
    assert store.read("P_3", "e")["id"] == "e"
