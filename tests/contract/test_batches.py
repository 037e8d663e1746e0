"""Transactional batches: all or nothing within one partition."""

from __future__ import annotations

import pytest

from cosmos_backend import errors
from cosmos_backend.store import BatchOp, DocumentStore

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
