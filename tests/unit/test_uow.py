"""Unit of work on a real embedded store: nothing without commit, identity map, etag guards."""

from __future__ import annotations

import pytest

from cosmos_backend import errors
from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import Cond, Document, Query
from cosmos_backend.uow import MultiPartitionCommit, StaleWrite, UnitOfWork


def d(doc_id: str, pk: str = "P_1", **fields: object) -> Document:
    return {"id": doc_id, "partitionKey": pk, **fields}


def feed_size(store: EmbeddedStore) -> int:
    return sum(len(store.read_feed(r, max_items=10_000).items) for r in store.feed_ranges())


# ------------------------------------------------------------------ nothing without commit
def test_it_writes_nothing_when_the_unit_of_work_is_left_without_commit(
        doc_store: EmbeddedStore) -> None:
    doc_store.create(d("kept", v=1))
    doc_store.create(d("gone", v=1))
    with UnitOfWork(doc_store) as uow:
        uow.add(d("new"))
        kept = uow.get("P_1", "kept")
        kept["v"] = 2
        uow.update(kept)
        uow.delete(uow.get("P_1", "gone"))
    assert doc_store.try_read("P_1", "new") is None
    assert doc_store.read("P_1", "kept")["v"] == 1
    assert doc_store.try_read("P_1", "gone") is not None
    assert feed_size(doc_store) == 2


def test_it_discards_pending_changes_on_rollback(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    uow.add(d("a"))
    uow.rollback()
    assert uow.commit() == []
    assert doc_store.try_read("P_1", "a") is None


def test_it_writes_nothing_for_a_commit_without_changes(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a"))
    uow = UnitOfWork(doc_store)
    uow.get("P_1", "a")
    assert uow.commit() == []
    assert feed_size(doc_store) == 1


# ------------------------------------------------------------------ identity map
def test_it_returns_the_same_object_for_repeated_reads(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a", v=1))
    uow = UnitOfWork(doc_store)
    first = uow.get("P_1", "a")
    doc_store.replace(d("a", v=2))  # the map answers; the store is not asked again
    assert uow.get("P_1", "a") is first
    assert first["v"] == 1


def test_it_returns_tracked_objects_from_queries(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a", kind="x"))
    uow = UnitOfWork(doc_store)
    loaded = uow.get("P_1", "a")
    page = uow.query("P_1", Query(where=(Cond("kind", "=", "x"),)))
    assert page.items[0] is loaded
    assert uow.query_all("P_1", Query())[0] is loaded


def test_it_returns_added_documents_before_commit(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    added = uow.add(d("a"))
    assert uow.get("P_1", "a") is added


def test_it_refuses_to_add_an_id_twice(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    uow.add(d("a"))
    with pytest.raises(errors.Conflict):
        uow.add(d("a"))


def test_it_hides_documents_deleted_in_the_unit_of_work(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a"))
    uow = UnitOfWork(doc_store)
    uow.delete(uow.get("P_1", "a"))
    assert uow.try_get("P_1", "a") is None


def test_it_refuses_to_update_a_document_it_did_not_load(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a"))
    with pytest.raises(errors.InvalidRequest):
        UnitOfWork(doc_store).update(d("a", v=2))


# ------------------------------------------------------------------ etag guards
def test_it_guards_updates_with_the_etag_it_read(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a", v=1))
    uow = UnitOfWork(doc_store)
    doc = uow.get("P_1", "a")
    doc_store.replace(d("a", v=2))  # a concurrent writer
    doc["v"] = 3
    uow.update(doc)
    with pytest.raises(StaleWrite) as caught:
        uow.commit()
    assert (caught.value.pk, caught.value.doc_id) == ("P_1", "a")
    assert doc_store.read("P_1", "a")["v"] == 2


def test_it_guards_deletes_with_the_etag_it_read(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a", v=1))
    uow = UnitOfWork(doc_store)
    uow.delete(uow.get("P_1", "a"))
    doc_store.replace(d("a", v=2))
    with pytest.raises(StaleWrite):
        uow.commit()
    assert doc_store.read("P_1", "a")["v"] == 2


def test_it_reports_an_add_of_an_existing_id_as_a_stale_write(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    uow.add(d("a", v=1))
    doc_store.create(d("a", v=2))  # created by someone else after we decided to
    with pytest.raises(StaleWrite):
        uow.commit()


def test_it_applies_no_change_of_a_commit_that_failed(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a", v=1))
    doc_store.create(d("b", v=1))
    uow = UnitOfWork(doc_store)
    uow.add(d("new"))
    a = uow.get("P_1", "a")
    a["v"] = 9
    uow.update(a)
    b = uow.get("P_1", "b")
    b["v"] = 9
    uow.update(b)
    doc_store.replace(d("b", v=2))
    with pytest.raises(StaleWrite):
        uow.commit()
    assert doc_store.try_read("P_1", "new") is None
    assert doc_store.read("P_1", "a")["v"] == 1


def test_it_raises_early_when_a_document_is_not_at_the_expected_etag(
        doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a"))
    uow = UnitOfWork(doc_store)
    doc = uow.get("P_1", "a")
    uow.expect_etag(doc, doc["_etag"])
    uow.expect_etag(doc, None)  # no expectation given
    with pytest.raises(StaleWrite):
        uow.expect_etag(doc, '"not-it"')


def test_it_tracks_the_new_etag_after_a_commit(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a", v=1))
    uow = UnitOfWork(doc_store)
    doc = uow.get("P_1", "a")
    doc["v"] = 2
    uow.update(doc)
    [written] = uow.commit()
    assert written["_etag"] == doc_store.read("P_1", "a")["_etag"]
    again = uow.get("P_1", "a")
    again["v"] = 3
    uow.update(again)
    uow.commit()  # guarded by the etag of the first commit, not the original read
    assert doc_store.read("P_1", "a")["v"] == 3
    assert uow.committed[-1]["v"] == 3


# ------------------------------------------------------------------ partitions and deletes
def test_it_refuses_to_commit_two_partitions(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    uow.add(d("a", pk="P_1"))
    uow.add(d("b", pk="P_2"))
    with pytest.raises(MultiPartitionCommit):
        uow.commit()
    assert doc_store.try_read("P_1", "a") is None
    assert doc_store.try_read("P_2", "b") is None


def test_it_deletes_on_commit(doc_store: EmbeddedStore) -> None:
    doc_store.create(d("a"))
    uow = UnitOfWork(doc_store)
    uow.delete(uow.get("P_1", "a"))
    assert uow.commit() == []  # deletes return no document
    assert doc_store.try_read("P_1", "a") is None


def test_it_cancels_an_add_that_is_deleted_before_commit(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    uow.delete(uow.add(d("a")))
    assert uow.pending() == []
