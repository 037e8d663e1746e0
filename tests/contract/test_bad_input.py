"""Bad input fails before anything is written, with the same exception on every backend."""

from __future__ import annotations

import pytest

from cosmos_backend import errors
from cosmos_backend.store import BatchOp, DocumentStore

pytestmark = pytest.mark.contract


def _nothing_written(store: DocumentStore) -> None:
    assert store.feed_ranges()
    for feed_range in store.feed_ranges():
        assert store.read_feed(feed_range).items == []


@pytest.mark.parametrize("bad_id", ["a/b", "a\\b", "a?b", "a#b", ""])
def test_it_rejects_ids_cosmos_cannot_store(store: DocumentStore, bad_id: str) -> None:
    with pytest.raises(errors.InvalidId):
        store.create({"id": bad_id, "partitionKey": "P_1"})
    _nothing_written(store)


def test_it_rejects_a_document_without_partition_key(store: DocumentStore) -> None:
    with pytest.raises(errors.MissingPartitionKey):
        store.create({"id": "a"})
    _nothing_written(store)


def test_it_rejects_a_document_over_2_mb(store: DocumentStore) -> None:
    with pytest.raises(errors.DocumentTooLarge):
        store.create({"id": "a", "partitionKey": "P_1", "blob": "x" * (2 * 1024 * 1024)})
    _nothing_written(store)


def test_it_rejects_a_batch_of_more_than_100_operations(store: DocumentStore) -> None:
    ops = [BatchOp.create({"id": f"d{i}", "partitionKey": "P_1"}) for i in range(101)]
    with pytest.raises(errors.BatchTooLarge):
        store.execute_batch("P_1", ops)
    _nothing_written(store)


def test_it_rejects_a_batch_spanning_partitions(store: DocumentStore) -> None:
    ops = [BatchOp.create({"id": "a", "partitionKey": "P_1"}),
           BatchOp.create({"id": "b", "partitionKey": "P_2"})]
    with pytest.raises(errors.CrossPartitionBatch):
        store.execute_batch("P_1", ops)
    _nothing_written(store)


def test_it_rejects_an_id_over_255_characters(store: DocumentStore) -> None:
    with pytest.raises(errors.InvalidId):
        store.create({"id": "x" * 256, "partitionKey": "P_1"})
    _nothing_written(store)


@pytest.mark.parametrize("bad", [
    {"id": "big", "partitionKey": "P_1", "blob": "x" * (2 * 1024 * 1024)},
    {"id": "no-key"},
    {"id": "a/b", "partitionKey": "P_1"},
])
def test_it_rejects_a_whole_batch_for_one_bad_document_in_the_middle(
        store: DocumentStore, bad: dict) -> None:
    ops = [BatchOp.create({"id": "ok1", "partitionKey": "P_1"}), BatchOp.create(bad),
           BatchOp.create({"id": "ok2", "partitionKey": "P_1"})]
    with pytest.raises(errors.InvalidRequest):
        store.execute_batch("P_1", ops)
    _nothing_written(store)


@pytest.mark.parametrize("write", ["replace", "upsert"])
def test_it_rejects_bad_documents_on_every_write(store: DocumentStore, write: str) -> None:
    store.create({"id": "a", "partitionKey": "P_1", "v": 1})
    with pytest.raises(errors.DocumentTooLarge):
        getattr(store, write)({"id": "a", "partitionKey": "P_1", "blob": "x" * (2 << 20)})
    with pytest.raises(errors.MissingPartitionKey):
        getattr(store, write)({"id": "a", "v": 2})
    assert store.read("P_1", "a")["v"] == 1


def test_it_rejects_an_empty_batch_and_bad_keys_on_reads(store: DocumentStore) -> None:
    with pytest.raises(errors.InvalidRequest):
        store.execute_batch("P_1", [])
    with pytest.raises(errors.MissingPartitionKey):
        store.read("", "a")
    with pytest.raises(errors.InvalidId):
        store.read("P_1", "a#b")
    with pytest.raises(errors.InvalidId):
        store.delete("P_1", "a?b")
