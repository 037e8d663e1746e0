"""The indexing policy becomes SQLite indexes that the view queries really use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.paging import decode_token, encode_token
from cosmos_backend.store import Cond, ContainerSpec, Query

POLICY = {
    "includedPaths": [{"path": "/docType/?"}],
    "compositeIndexes": [
        [{"path": "/QueryWard", "order": "ascending"}, {"path": "/QueryName", "order": "ascending"},
         {"path": "/id", "order": "ascending"}],
        # Ascending only: LATEST (AdmittedAt DESC, id DESC) reads it backwards.
        [{"path": "/QueryWard", "order": "ascending"},
         {"path": "/QueryAdmittedAt", "order": "ascending"}, {"path": "/id", "order": "ascending"}],
        [{"path": "/grp", "order": "ascending"}, {"path": "/n", "order": "ascending"}],
    ],
}
WARD = Query(where=(Cond("QueryWard", "=", "W1"),), order_by=(("QueryName", "ASC"),))
LATEST = Query(where=(Cond("QueryWard", "=", "W1"),), order_by=(("QueryAdmittedAt", "DESC"),))


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    store = EmbeddedStore(str(tmp_path / "ix.sqlite3"), ContainerSpec(name="ix",
                                                                        indexing_policy=POLICY))
    for i in range(300):
        store.create({"id": f"r{i:03d}", "partitionKey": "V_1", "docType": "Row",
                      "grp": "AB"[i % 2], "n": i % 17, "QueryWard": f"W{i % 3}",
                      "QueryName": f"N{(i * 37) % 300:03d}", "QueryAdmittedAt": f"2026-{i:04d}"})
    return store


def plans(store: EmbeddedStore, query: Query, after: list[Any] | None = None) -> list[str]:
    return store.explain_query("V_1", query, continuation=encode_token(after) if after else None)


def second_page_key(store: EmbeddedStore, query: Query) -> list[Any]:
    token = store.query("V_1", query, page_size=10).continuation
    assert token is not None
    return decode_token(token)


@pytest.mark.parametrize("query", [WARD, LATEST], ids=["ascending", "descending"])
def test_it_serves_a_filtered_sorted_page_from_the_composite_index(
        store: EmbeddedStore, query: Query) -> None:
    for plan in plans(store, query) + plans(store, query, second_page_key(store, query)):
        assert "USING INDEX" in plan and "_ix_" in plan, plan
        assert "TEMP B-TREE" not in plan, plan  # rows come in index order: no sort step


@pytest.mark.parametrize("query", [WARD, LATEST], ids=["ascending", "descending"])
def test_it_seeks_to_the_continuation_instead_of_scanning_to_it(
        store: EmbeddedStore, query: Query) -> None:
    first = plans(store, query, second_page_key(store, query))[0]
    assert "<expr>>?" in first or "<expr><?" in first, first  # a range bound on the sort key


@pytest.mark.parametrize("query", [WARD, LATEST], ids=["ascending", "descending"])
def test_it_reads_null_groups_from_the_index_too(store: EmbeddedStore, query: Query) -> None:
    # Continuations inside or next to the NULL group of the sort key run as extra statements;
    # each must still seek in the composite index and never sort.
    after_null = plans(store, query, [None, "r100"])
    before_null = plans(store, query, ["2026-0100", "r100"])
    assert len(after_null) + len(before_null) == 3  # the NULL group is a statement of its own
    for plan in after_null + before_null:
        assert "USING INDEX" in plan and "_ix_" in plan, plan
        assert "TEMP B-TREE" not in plan, plan


def test_it_uses_the_partial_index_only_for_documents_with_query_fields(
        store: EmbeddedStore) -> None:
    [index_sql] = [row[0] for row in store._conn().execute(
        "SELECT sql FROM sqlite_master WHERE type='index' AND sql LIKE '%QueryName%'")]
    assert index_sql.endswith("WHERE q = 1")  # events and aggregates skip its upkeep
    [plain] = [row[0] for row in store._conn().execute(
        "SELECT sql FROM sqlite_master WHERE type='index' AND sql LIKE '%$.grp%'")]
    assert "WHERE" not in plain


def test_it_uses_the_trailing_primary_key_as_the_id_tie_breaker(store: EmbeddedStore) -> None:
    # The (grp, n) index has no id column; the table's (pk, id) key follows it in the index.
    [plan] = plans(store, Query(where=(Cond("grp", "=", "A"),), order_by=(("n", "ASC"),)))
    assert "USING INDEX" in plan and "TEMP B-TREE" not in plan, plan


def test_it_returns_the_same_rows_as_the_full_sort(store: EmbeddedStore) -> None:
    for query, key, reverse in ((WARD, "QueryName", False), (LATEST, "QueryAdmittedAt", True)):
        everything = [d for d in store.query_all("V_1", Query()) if d["QueryWard"] == "W1"]
        expected = [d["id"] for d in sorted(sorted(everything, key=lambda d: d["id"]),
                                            key=lambda d, k=key: d[k], reverse=reverse)]
        assert [d["id"] for d in store.query_all("V_1", query, page_size=7)] == expected


def test_it_keeps_the_indexes_of_the_policy_and_drops_the_others(tmp_path: Path) -> None:
    path = str(tmp_path / "p.sqlite3")
    first = EmbeddedStore(path, ContainerSpec(name="p", indexing_policy=POLICY))
    assert sum(line.startswith("index") for line in first.provisioned) == 4
    again = EmbeddedStore(path, ContainerSpec(name="p", indexing_policy=POLICY))
    assert again.provisioned == ["container 'p' exists"]
    narrower = {"compositeIndexes": POLICY["compositeIndexes"][:1]}
    less = EmbeddedStore(path, ContainerSpec(name="p", indexing_policy=narrower))
    assert sum("dropped" in line for line in less.provisioned) == 3


def test_an_index_that_begins_a_longer_one_is_not_created(tmp_path: Path) -> None:
    """(pk, QueryWard) adds nothing beside (pk, QueryWard, QueryName, id): one B-tree less
    to update on every write."""
    policy = {**POLICY, "includedPaths": [{"path": "/docType/?"}, {"path": "/QueryWard/?"},
                                          {"path": "/QueryName/?"}]}
    store = EmbeddedStore(str(tmp_path / "dedup.sqlite3"),
                          ContainerSpec(name="dedup", indexing_policy=policy))
    sql = [row[0] for row in store._conn().execute(
        "SELECT sql FROM sqlite_master WHERE type='index' AND name LIKE '%_ix_%'")]
    ward_only = [s for s in sql if "QueryWard'))" in s.replace(" WHERE q = 1", "")]
    assert ward_only == []
    assert any("'$.QueryName'))" in s for s in sql)  # no longer index starts with it
    assert len(sql) == 5  # docType, QueryName, and the three composites
