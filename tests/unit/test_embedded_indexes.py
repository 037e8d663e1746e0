"""The indexing policy becomes SQLite indexes that the view queries really use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cosmos_backend.embedded.sqlquery import (
    PresenceChecks,
    has_path,
    presence_mask,
    presence_terms,
)
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


def test_it_keeps_documents_without_the_leading_path_out_of_an_index(
        store: EmbeddedStore) -> None:
    [index_sql] = [row[0] for row in store._conn().execute(
        "SELECT sql FROM sqlite_master WHERE type='index' AND sql LIKE '%QueryName%'")]
    bit = store._bits["QueryWard"]
    assert index_sql.endswith(f"WHERE (pm & {bit}) != 0")  # led by QueryWard
    store.create({"id": "e1", "partitionKey": "V_1", "docType": "Event", "grp": "A"})
    store.create({"id": "e2", "partitionKey": "V_1", "QueryWard": None})
    pm = dict(store._conn().execute(f"SELECT id, pm FROM {store.table} WHERE id LIKE 'e%'"))
    assert pm["e1"] & bit == 0  # skips the upkeep of every QueryWard index
    assert pm["e2"] & bit  # a JSON null is a value: the row is in the index


def _rows(store: EmbeddedStore, query: Query) -> list[str]:
    return [d["id"] for d in store.query_all("V_1", query, page_size=7)]


def test_a_sort_alone_uses_the_partial_index_while_every_row_has_the_path(
        store: EmbeddedStore) -> None:
    by_type = Query(order_by=(("docType", "ASC"),))
    [plan] = plans(store, by_type)
    assert "USING INDEX" in plan and "_ix_" in plan and "TEMP B-TREE" not in plan, plan
    # A row without docType sorts first; the partial index cannot hold it, so the query
    # reads the partition instead, with the same results as a full sort.
    store.create({"id": "zz", "partitionKey": "V_1", "grp": "A"})
    [plan] = plans(store, by_type)
    assert "TEMP B-TREE" in plan, plan
    assert _rows(store, by_type) == ["zz"] + [f"r{i:03d}" for i in range(300)]
    # A filter on the leading path leaves that row out anyway: the index serves again.
    for plan in plans(store, WARD):
        assert "_ix_" in plan and "TEMP B-TREE" not in plan, plan
    assert "zz" not in _rows(store, WARD)


def test_the_mask_clears_exactly_the_bits_of_the_paths_a_document_lacks() -> None:
    checks = PresenceChecks.of({"open": 1, "QueryWard": 2, "docContents.status": 4,
                                "docContents.startedAt": 8})
    assert presence_mask({"open": True, "QueryWard": "W1",
                          "docContents": {"status": "x", "startedAt": None}}, checks) == ~0
    assert presence_mask({"QueryWard": None, "docContents": {"status": 1}}, checks) == ~(1 | 8)
    # A path through a non-object is missing, as json_type says.
    assert presence_mask({"docContents": ["status"]}, checks) == ~(1 | 2 | 4 | 8)
    assert presence_mask({"other": 1}, PresenceChecks.of({})) == -1  # nothing known: all set


def test_a_sort_path_qualifies_only_where_every_row_the_filters_allow_has_it() -> None:
    bits = {"docType": 1, "QueryWard": 2, "grp": 4}
    rows_and_events = [~0, ~2]  # rows have every path; events lack QueryWard
    by_ward = Query(order_by=(("QueryWard", "ASC"),))
    assert presence_terms(by_ward, bits, rows_and_events) == []
    assert presence_terms(by_ward, bits, [~4]) == [has_path(2)]  # grp is not sorted on
    assert presence_terms(by_ward, bits, None) == []  # unknown partition: no promise
    typed = Query(where=(Cond("docType", "=", "Row"),), order_by=(("QueryWard", "ASC"),))
    assert presence_terms(typed, bits, rows_and_events) == [has_path(1)]
    grouped = Query(where=(Cond("grp", ">", "A"),), order_by=(("QueryWard", "ASC"),))
    assert presence_terms(grouped, bits, [~0, ~(2 | 4)]) == [has_path(4), has_path(2)]


def test_sorted_results_include_rows_without_the_path_in_a_mixed_partition(
        store: EmbeddedStore) -> None:
    store.create({"id": "ev", "partitionKey": "V_1", "docType": "Event", "grp": "A"})
    events = Query(where=(Cond("grp", "=", "A"),), order_by=(("QueryWard", "ASC"),))
    found = _rows(store, events)
    assert found[0] == "ev" and len(found) == 151  # missing sorts first, as before
    latest = Query(where=(Cond("grp", "=", "A"),), order_by=(("QueryWard", "DESC"),))
    assert _rows(store, latest)[-1] == "ev"


def test_a_row_written_without_a_mask_is_in_every_index(store: EmbeddedStore) -> None:
    """Older code, which knows no pm, leaves the column's default: all bits set."""
    doc = '{"id": "old", "partitionKey": "V_1", "QueryWard": "W1", "QueryName": "A"}'
    store._conn().execute(f"INSERT INTO {store.table} (pk, id, doc, etag, ts, lsn, rng, exp) "
                          "VALUES ('V_1', 'old', ?, 'x', 0, 0, 0, NULL)", (doc,))
    assert _rows(store, WARD)[0] == "old"
    assert "old" in _rows(store, Query(order_by=(("QueryWard", "ASC"),)))


def test_a_path_added_to_the_policy_later_is_found_in_rows_written_before(
        tmp_path: Path) -> None:
    path = str(tmp_path / "grow.sqlite3")
    before = EmbeddedStore(path, ContainerSpec(name="g", indexing_policy=POLICY))
    before.create({"id": "a", "partitionKey": "V_1", "colour": "red"})
    before.create({"id": "b", "partitionKey": "V_1", "shape": "round"})
    wider = {**POLICY, "includedPaths": [{"path": "/docType/?"}, {"path": "/colour/?"}]}
    after = EmbeddedStore(path, ContainerSpec(name="g", indexing_policy=wider))
    assert any("presence bits for colour" in line for line in after.provisioned)
    before.create({"id": "c", "partitionKey": "V_1", "colour": "blue"})  # knows no colour bit
    by_colour = Query(order_by=(("colour", "ASC"),))
    assert [d["id"] for d in after.query_all("V_1", by_colour)] == ["b", "c", "a"]
    red = Query(where=(Cond("colour", "=", "red"),))
    assert [d["id"] for d in after.query_all("V_1", red)] == ["a"]


def test_a_store_made_before_presence_masks_is_upgraded_in_place(tmp_path: Path) -> None:
    path = str(tmp_path / "old.sqlite3")
    store = EmbeddedStore(path, ContainerSpec(name="o", indexing_policy=POLICY))
    for i in range(20):
        store.create({"id": f"r{i:02d}", "partitionKey": "V_1", "QueryWard": f"W{i % 2}",
                      "QueryName": f"N{19 - i:02d}"})
    store.create({"id": "ev", "partitionKey": "V_1", "docType": "Event"})
    expected = _rows(store, WARD)
    conn = store._conn()  # back to the earlier layout: no pm, Query* indexes on q = 1
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index' "
                                "AND (name LIKE '%_ix_%' OR name LIKE '%_pm')").fetchall():
        conn.execute(f"DROP INDEX {name}")
    conn.execute(f"ALTER TABLE {store.table} DROP COLUMN pm")
    conn.execute("DELETE FROM store_meta WHERE key LIKE 'pm:%'")
    store.close()
    again = EmbeddedStore(path, ContainerSpec(name="o", indexing_policy=POLICY))
    assert "column pm added" in again.provisioned
    assert _rows(again, WARD) == expected
    pm = dict(again._conn().execute(f"SELECT id, pm FROM {again.table}"))
    assert pm["ev"] & again._bits["QueryWard"] == 0 and pm["r00"] & again._bits["QueryWard"]


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
