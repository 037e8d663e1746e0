"""Change feed in latest-version mode: per-partition order, resume, restart, coalescing, and
iter_feed walking a range to its end."""

from __future__ import annotations

import pytest

from cosmos_backend.store import BatchOp, DocumentStore, iter_feed
from tests.contract.conftest import StoreFactory

pytestmark = pytest.mark.contract


def drain(store: DocumentStore, tokens: dict[str, str | None] | None = None,
          page: int = 3) -> tuple[list[dict], dict[str, str | None]]:
    tokens = dict(tokens or {})
    seen: list[dict] = []
    for feed_range in store.feed_ranges():
        token = tokens.get(feed_range)
        for result in iter_feed(store, feed_range, token, max_items=page):
            seen.extend(result.items)
            token = result.continuation
        tokens[feed_range] = token
    return seen, tokens


def test_it_orders_changes_within_a_partition(store: DocumentStore) -> None:
    for i in range(7):
        store.create({"id": f"e{i}", "partitionKey": "P_1", "n": i})
        store.create({"id": f"e{i}", "partitionKey": "P_2", "n": i})
    seen, _ = drain(store)
    for pk in ("P_1", "P_2"):
        assert [d["n"] for d in seen if d["partitionKey"] == pk] == list(range(7))


def test_it_resumes_from_a_continuation(store: DocumentStore) -> None:
    store.create({"id": "a", "partitionKey": "P_1"})
    first, tokens = drain(store)
    store.create({"id": "b", "partitionKey": "P_1"})
    second, tokens = drain(store, tokens)
    third, _ = drain(store, tokens)
    assert [d["id"] for d in first] == ["a"]
    assert [d["id"] for d in second] == ["b"]
    assert third == []


def test_it_loses_nothing_across_a_restart(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.execute_batch("P_1", [BatchOp.create({"id": f"a{i}", "partitionKey": "P_1"})
                                for i in range(5)])
    seen, tokens = drain(store, page=2)
    restarted = store_factory()  # a new handle, as after a process restart
    restarted.create({"id": "late", "partitionKey": "P_1"})
    after, _ = drain(restarted, tokens)
    assert sorted(d["id"] for d in seen) == [f"a{i}" for i in range(5)]
    assert [d["id"] for d in after] == ["late"]


def test_it_shows_a_document_changed_twice_once_at_its_latest_version(
        store: DocumentStore) -> None:
    _, tokens = drain(store)
    store.create({"id": "a", "partitionKey": "P_1", "v": 1})
    store.replace({"id": "a", "partitionKey": "P_1", "v": 2})
    store.replace({"id": "a", "partitionKey": "P_1", "v": 3})
    seen, _ = drain(store, tokens)
    assert [(d["id"], d["v"]) for d in seen] == [("a", 3)]


def test_it_leaves_deletes_out(store: DocumentStore) -> None:
    store.create({"id": "a", "partitionKey": "P_1"})
    store.create({"id": "b", "partitionKey": "P_1"})
    store.delete("P_1", "a")
    seen, _ = drain(store)
    assert [d["id"] for d in seen] == ["b"]


def test_its_feed_ranges_cover_every_partition_exactly_once(store: DocumentStore) -> None:
    pks = [f"P_{i}" for i in range(40)]
    for pk in pks:
        store.create({"id": "x", "partitionKey": pk})
    per_range = {}
    for feed_range in store.feed_ranges():
        per_range[feed_range] = {d["partitionKey"] for page in iter_feed(store, feed_range,
                                                                          max_items=100)
                                 for d in page.items}
    union = [pk for found in per_range.values() for pk in found]
    assert sorted(union) == sorted(pks)  # every partition, none twice


def test_it_carries_a_position_that_grows_in_feed_order(store: DocumentStore) -> None:
    for i in range(4):
        store.upsert({"id": f"x{i}", "partitionKey": "P_1"})
    seen, _ = drain(store)
    positions = [d["_lsn"] for d in seen]
    assert positions == sorted(positions)
    assert len(set(positions)) == len(positions)


def test_it_walks_a_range_to_an_empty_last_page_that_marks_where_to_resume(
        store: DocumentStore) -> None:
    store.execute_batch("P_1", [BatchOp.create({"id": f"a{i}", "partitionKey": "P_1"})
                                for i in range(5)])
    walks = {r: list(iter_feed(store, r, max_items=2)) for r in store.feed_ranges()}
    for pages in walks.values():
        assert pages[-1].items == [] and all(page.items for page in pages[:-1])
    assert sorted(d["id"] for pages in walks.values() for page in pages
                  for d in page.items) == [f"a{i}" for i in range(5)]
    store.create({"id": "late", "partitionKey": "P_1"})
    resumed = [d["id"] for r, pages in walks.items()
               for page in iter_feed(store, r, pages[-1].continuation) for d in page.items]
    assert resumed == ["late"]
