"""Embedded query semantics: filters compare like Cosmos DB, keyset paging is total."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosmos_backend import errors
from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import Cond, ContainerSpec, Query

PK = "V_T"


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    return EmbeddedStore(str(tmp_path / "q.sqlite3"), ContainerSpec(name="q"))


def put(store: EmbeddedStore, **docs: dict[str, Any]) -> None:
    for doc_id, fields in docs.items():
        store.create({"id": doc_id, "partitionKey": PK, **fields})


def ids(store: EmbeddedStore, *where: Cond) -> list[str]:
    return [d["id"] for d in store.query_all(PK, Query(where=where))]


# ------------------------------------------------------------------ startswith
def test_it_matches_a_prefix_exactly(store: EmbeddedStore) -> None:
    put(store, a={"n": "ADAMS"}, b={"n": "ADLER"}, c={"n": "AD"}, d={"n": "adams"},
        e={"n": "AE"}, f={"n": "AC\U0010ffff"}, g={"n": 5}, h={"n": ["AD"]})
    assert ids(store, Cond("n", "startswith", "AD")) == ["a", "b", "c"]


def test_it_matches_prefixes_ending_in_the_last_code_point(store: EmbeddedStore) -> None:
    put(store, a={"n": "A\U0010ffff"}, b={"n": "A\U0010ffffZ"}, c={"n": "B"})
    assert ids(store, Cond("n", "startswith", "A\U0010ffff")) == ["a", "b"]
    assert ids(store, Cond("n", "startswith", "A")) == ["a", "b"]


def test_it_matches_every_string_and_nothing_else_with_an_empty_prefix(
        store: EmbeddedStore) -> None:
    put(store, a={"n": "x"}, b={"n": ""}, c={"n": 1}, d={"n": ["x"]}, e={"n": None}, f={})
    assert ids(store, Cond("n", "startswith", "")) == ["a", "b"]


def test_it_does_not_take_array_text_for_a_string_prefix(store: EmbeddedStore) -> None:
    put(store, a={"n": '["x'}, b={"n": ["x"]})
    assert ids(store, Cond("n", "startswith", '["')) == ["a"]


# ------------------------------------------------------------------ in
def test_it_matches_any_of_a_list(store: EmbeddedStore) -> None:
    put(store, a={"s": "ready"}, b={"s": "done"}, c={"s": "created"}, d={})
    assert ids(store, Cond("s", "in", ["ready", "created"])) == ["a", "c"]
    assert ids(store, Cond("s", "in", [])) == []


def test_it_matches_in_lists_by_type(store: EmbeddedStore) -> None:
    put(store, a={"v": 1}, b={"v": True}, c={"v": None}, d={}, e={"v": "1"}, f={"v": 0})
    assert ids(store, Cond("v", "in", [1])) == ["a"]
    assert ids(store, Cond("v", "in", [True, None])) == ["b", "c"]
    assert ids(store, Cond("v", "in", ["1", 0])) == ["e", "f"]
    assert ids(store, Cond("id", "in", ["a", 5, "z"])) == ["a"]


def test_it_rejects_lists_inside_an_in_list(store: EmbeddedStore) -> None:
    with pytest.raises(errors.InvalidRequest):
        ids(store, Cond("v", "in", [[1]]))


# ------------------------------------------------------------------ array_contains
def test_it_finds_elements_of_arrays_only(store: EmbeddedStore) -> None:
    put(store, a={"t": ["x", "y"]}, b={"t": "x"}, c={"t": {"k": "x"}}, d={"t": []},
        e={"t": [["x"]]}, f={})
    assert ids(store, Cond("t", "array_contains", "x")) == ["a"]


def test_it_finds_array_elements_by_type(store: EmbeddedStore) -> None:
    put(store, a={"t": [1]}, b={"t": [True]}, c={"t": ["1"]}, d={"t": [None]}, e={"t": [1.0]})
    assert ids(store, Cond("t", "array_contains", 1)) == ["a", "e"]
    assert ids(store, Cond("t", "array_contains", True)) == ["b"]
    assert ids(store, Cond("t", "array_contains", "1")) == ["c"]
    assert ids(store, Cond("t", "array_contains", None)) == ["d"]


def test_it_finds_elements_of_nested_arrays(store: EmbeddedStore) -> None:
    put(store, a={"c": {"tags": ["x"]}}, b={"c": {"tags": ["y"]}})
    assert ids(store, Cond("c.tags", "array_contains", "x")) == ["a"]


# ------------------------------------------------------------------ comparing across types
def test_it_compares_values_of_one_type_only(store: EmbeddedStore) -> None:
    put(store, num={"v": 1}, true={"v": True}, false={"v": False}, text={"v": "1"},
        null={"v": None}, missing={}, arr={"v": [1]}, zero={"v": 0})
    assert ids(store, Cond("v", "=", 1)) == ["num"]
    assert ids(store, Cond("v", "=", True)) == ["true"]
    assert ids(store, Cond("v", "=", False)) == ["false"]
    assert ids(store, Cond("v", "=", 0)) == ["zero"]
    assert ids(store, Cond("v", "=", "1")) == ["text"]
    assert ids(store, Cond("v", "=", None)) == ["null"]
    assert ids(store, Cond("v", "!=", 1)) == ["zero"]
    assert ids(store, Cond("v", "!=", True)) == ["false"]
    assert ids(store, Cond("v", "!=", None)) == []
    assert ids(store, Cond("v", ">=", 0)) == ["num", "zero"]
    assert ids(store, Cond("v", ">", "")) == ["text"]


def test_it_does_not_take_array_text_for_a_string(store: EmbeddedStore) -> None:
    put(store, a={"v": "[1]"}, b={"v": [1]})
    assert ids(store, Cond("v", "=", "[1]")) == ["a"]


def test_it_compares_system_columns_by_their_type(store: EmbeddedStore) -> None:
    put(store, a={}, b={})
    assert ids(store, Cond("id", "=", "a")) == ["a"]
    assert ids(store, Cond("id", "=", 1)) == []
    assert ids(store, Cond("id", "!=", "a")) == ["b"]
    assert ids(store, Cond("_ts", ">", 0)) == ["a", "b"]
    assert ids(store, Cond("_ts", ">", "0")) == []


def test_it_rejects_what_it_cannot_compare(store: EmbeddedStore) -> None:
    for cond in (Cond("v", ">", True), Cond("v", "=", {"a": 1}), Cond("v", "startswith", 1),
                 Cond("id", "array_contains", "x"), Cond("v", "array_contains", ["x"]),
                 Cond("v.x-y", "=", 1), Cond("v", "like", "x")):  # type: ignore[arg-type]
        with pytest.raises(errors.InvalidRequest):
            ids(store, cond)


# ------------------------------------------------------------------ keyset paging
def test_it_rejects_foreign_or_garbled_continuations(store: EmbeddedStore) -> None:
    put(store, a={"n": 1}, b={"n": 2})
    token = store.query(PK, Query(order_by=(("n", "ASC"),)), page_size=1).continuation
    assert token is not None
    with pytest.raises(errors.InvalidRequest):
        store.query(PK, Query(), page_size=1, continuation=token)  # one key, not two
    for bad in ("!!", "bm90IGEgbGlzdA", "e30"):
        with pytest.raises(errors.InvalidRequest):
            store.query(PK, Query(), continuation=bad)
    with pytest.raises(errors.InvalidRequest):
        store.query(PK, Query(), page_size=0)


_value = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["", "a", "b", "B", "é"]),
                   st.floats(-2, 2, allow_nan=False).map(lambda f: round(f, 1)))
_row = st.fixed_dictionaries({}, optional={"a": _value, "b": _value})
_order = st.lists(st.tuples(st.sampled_from(["a", "b", "id"]), st.sampled_from(["ASC", "DESC"])),
                  max_size=3, unique_by=lambda key: key[0])


PAGING_POLICY = {"compositeIndexes": [
    [{"path": f"/{a}", "order": da}, {"path": f"/{b}", "order": db}]
    for a, b in (("a", "b"), ("b", "a")) for da in ("ascending", "descending")
    for db in ("ascending", "descending")]}


def _rank(value: Any) -> tuple[int, Any]:
    """The engine's order: missing/null first, then numbers, then strings (by code point)."""
    if value is None:
        return (0, 0)
    if isinstance(value, str):
        return (2, value.encode())
    return (1, value)


def _brute_force(rows: list[dict[str, Any]], order: list[tuple[str, str]]) -> list[str]:
    tie = order[-1][1] if order else "ASC"  # the id tie-break follows the last key
    keys = order + ([] if any(p == "id" for p, _ in order) else [("id", tie)])
    out = list(rows)
    for path, direction in reversed(keys):  # stable sorts, least significant key first
        out.sort(key=lambda r, p=path: _rank(r.get(p)), reverse=direction == "DESC")
    return [r["id"] for r in out]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, max_size=25), order=_order, page_size=st.integers(1, 7))
def test_it_pages_in_the_same_order_as_a_full_sort(tmp_path_factory: pytest.TempPathFactory,
                                                   rows: list[dict[str, Any]],
                                                   order: list[tuple[str, str]],
                                                   page_size: int) -> None:
    # Indexed, so the engine pages through index order and seeks past continuations.
    store = EmbeddedStore(str(tmp_path_factory.mktemp("p") / "p.sqlite3"),
                          ContainerSpec(name="p", indexing_policy=PAGING_POLICY))
    docs = [{"id": f"r{i:02d}", **row} for i, row in enumerate(rows)]
    for doc in docs:
        store.create({**doc, "partitionKey": PK})
    query = Query(order_by=tuple(order))  # type: ignore[arg-type]
    got = [d["id"] for d in store.query_all(PK, query, page_size=page_size)]
    assert got == _brute_force(docs, order)
    store.close()
