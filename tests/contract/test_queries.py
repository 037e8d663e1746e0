"""The query subset the product issues gives identical results, and pages, on every backend."""

from __future__ import annotations

import pytest

from cosmos_backend import errors
from cosmos_backend.store import Cond, DocumentStore, Query

pytestmark = pytest.mark.contract

ROWS = [
    {"id": "r1", "n": 5, "name": "ADAMS", "grp": "A", "tags": ["x", "y"],
     "docContents": {"ward": "W1", "bed": 3}},
    {"id": "r2", "n": 1, "name": "BAKER", "grp": "B", "tags": ["y"],
     "docContents": {"ward": "W2", "bed": 1}},
    {"id": "r3", "n": 3, "name": "ADLER", "grp": "A", "tags": [],
     "docContents": {"ward": "W1", "bed": 7}},
    {"id": "r4", "n": 3, "name": "CRUZ", "grp": "B", "tags": ["x"],
     "docContents": {"ward": "W1", "bed": 3}},
    {"id": "r5", "n": 9, "name": "ÁLVAREZ", "grp": "A", "tags": ["z"],
     "docContents": {"ward": "W2", "bed": 2}},
    {"id": "r6", "n": 2, "name": "adams", "grp": "C", "tags": ["x"],
     "docContents": {"ward": "W3", "bed": 1}},
]


@pytest.fixture
def rows(store: DocumentStore) -> DocumentStore:
    for row in ROWS:
        store.create({**row, "partitionKey": "V_T", "docType": "Row"})
    # Same fields in another partition: a query must never see it.
    store.create({**ROWS[0], "id": "other", "partitionKey": "V_U", "docType": "Row"})
    return store


def ids(store: DocumentStore, query: Query, page_size: int = 2) -> list[str]:
    return [d["id"] for d in store.query_all("V_T", query, page_size=page_size)]


def C(path: str, op: str, value: object) -> Cond:  # capital: reads like a term in a query
    return Cond(path, op, value)  # type: ignore[arg-type]


QUERY_CASES = [
    (Query(), ["r1", "r2", "r3", "r4", "r5", "r6"]),
    (Query(order_by=(("n", "ASC"),)), ["r2", "r6", "r3", "r4", "r1", "r5"]),
    # Ties (r3, r4 at n = 3) break on id in the last key's direction.
    (Query(order_by=(("n", "DESC"),)), ["r5", "r1", "r4", "r3", "r6", "r2"]),
    (Query(where=(C("grp", "=", "A"),), order_by=(("n", "ASC"),)), ["r3", "r1", "r5"]),
    (Query(where=(C("grp", "=", "A"),), order_by=(("n", "DESC"),)), ["r5", "r1", "r3"]),
    (Query(order_by=(("grp", "ASC"), ("n", "ASC"))), ["r3", "r1", "r5", "r2", "r4", "r6"]),
    (Query(order_by=(("grp", "ASC"), ("n", "DESC"))), ["r5", "r1", "r3", "r4", "r2", "r6"]),
    (Query(order_by=(("docContents.ward", "ASC"), ("docContents.bed", "DESC"))),
     ["r3", "r4", "r1", "r5", "r2", "r6"]),
    (Query(where=(C("grp", "!=", "A"),)), ["r2", "r4", "r6"]),
    (Query(where=(C("n", ">", 2),)), ["r1", "r3", "r4", "r5"]),
    (Query(where=(C("n", "<=", 2),)), ["r2", "r6"]),
    (Query(where=(C("n", ">=", 3), C("n", "<", 9))), ["r1", "r3", "r4"]),
    (Query(where=(C("name", ">", "B"),), order_by=(("name", "ASC"),)), ["r2", "r4", "r6", "r5"]),
    (Query(where=(C("name", "startswith", "AD"),), order_by=(("name", "ASC"),)),
     ["r1", "r3"]),
    (Query(where=(C("name", "startswith", "ad"),)), ["r6"]),  # case-sensitive
    (Query(where=(C("grp", "in", ["B", "C"]),)), ["r2", "r4", "r6"]),
    (Query(where=(C("n", "in", [1, 9, 42]),)), ["r2", "r5"]),
    (Query(where=(C("tags", "array_contains", "x"),)), ["r1", "r4", "r6"]),
    (Query(where=(C("name", "=", "CRUZ"),)), ["r4"]),
    (Query(where=(C("grp", "in", []),)), []),
    (Query(where=(C("docContents.ward", "=", "W1"),), order_by=(("n", "ASC"),)),
     ["r3", "r4", "r1"]),
    (Query(where=(C("docContents.bed", "<", 3), C("docContents.ward", "startswith", "W")),),
     ["r2", "r5", "r6"]),
    (Query(where=(C("docContents.missing", "=", "W1"),)), []),
    (Query(where=(C("n", "=", "5"),)), []),  # a string never equals a number
]


@pytest.mark.parametrize(("query", "expected"), QUERY_CASES)
def test_it_filters_and_orders_identically(rows: DocumentStore, query: Query,
                                           expected: list[str]) -> None:
    assert ids(rows, query) == expected
    assert ids(rows, query, page_size=50) == expected


@pytest.mark.parametrize(("query", "expected"), QUERY_CASES)
def test_it_counts_what_the_query_would_return(rows: DocumentStore, query: Query,
                                              expected: list[str]) -> None:
    assert rows.count_query("V_T", query) == len(expected)
    assert rows.count_query("V_OTHER", query) == 0


def test_it_never_returns_a_page_larger_than_asked(rows: DocumentStore) -> None:
    token: str | None = None
    sizes = []
    while True:
        page = rows.query("V_T", Query(order_by=(("n", "DESC"),)), page_size=4, continuation=token)
        sizes.append(len(page.items))
        token = page.continuation
        if not token:
            break
    assert max(sizes) <= 4 and sum(sizes) == 6


@pytest.mark.parametrize("direction", ["ASC", "DESC"])
def test_it_keeps_paging_correct_while_items_are_inserted(rows: DocumentStore,
                                                          direction: str) -> None:
    query = Query(order_by=(("n", direction),))  # type: ignore[arg-type]
    first = rows.query("V_T", query, page_size=2)
    seen = [d["id"] for d in first.items]
    rows.create({"id": "r0", "partitionKey": "V_T", "n": 0})
    rows.create({"id": "r9", "partitionKey": "V_T", "n": 100})
    token, inserted = first.continuation, 0
    while token:
        page = rows.query("V_T", query, page_size=2, continuation=token)
        seen.extend(d["id"] for d in page.items)
        token = page.continuation
        if inserted < 3:  # keep writing between pages, on both sides of the cursor
            rows.create({"id": f"late{inserted}", "partitionKey": "V_T", "n": 4})
            inserted += 1
    assert len(seen) == len(set(seen)), seen  # no duplicates
    assert set(seen) >= {r["id"] for r in ROWS}  # nothing that existed at the start is missed
    assert seen.index("r2") < seen.index("r5") if direction == "ASC" else True


def test_it_rejects_a_garbled_continuation(rows: DocumentStore) -> None:
    with pytest.raises(errors.StoreError):
        rows.query("V_T", Query(order_by=(("n", "ASC"),)), page_size=2,
                   continuation="not-a-token")


@pytest.mark.parametrize("query", [
    Query(where=(C("a-b", "=", 1),)),
    Query(where=(C("n", ">", True),)),
    Query(where=(C("n", "=", [1]),)),
    Query(where=(C("n", "<", None),)),
    Query(where=(C("name", "startswith", 1),)),
    Query(where=(C("id", "array_contains", "x"),)),
    Query(where=(C("n", "like", 1),)),
    Query(order_by=(("n", "UP"),)),  # type: ignore[arg-type]
])
def test_it_refuses_queries_outside_the_subset(rows: DocumentStore, query: Query) -> None:
    with pytest.raises(errors.InvalidRequest):
        rows.query("V_T", query)
