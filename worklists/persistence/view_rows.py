"""View row documents: a :class:`Row` of generation ``gen``, projected at sequence ``seq``.

Stored in its view partition (:func:`view_pk`) with the display fields as contents (plus
the sequence and when it was projected) and the ``Query*`` fields at the top level, the
only indexed paths.

Where a row lives depends on its generation's layout
(:func:`worklists.persistence.generations.layout`). In layout 1 every view bucket is a
partition of its own. In layout 2 the lists of one ward — medications due, my patients,
observations due, the shift's beds and the census's open stays — share the ward's partition
``V_Ward_g<gen>_<ward>``, each row's id prefixed with its view (``MyPatients:<id>``) and
every query of one of them filtered on the row's view (``docSubType``, indexed). A command
that changes what a ward's nurse sees (an admission, a dose, a discharge) then writes that
ward's rows in one transactional batch instead of one per list.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import (
    MAX_BATCH_OPERATIONS,
    BatchOp,
    Cond,
    Document,
    DocumentStore,
    Query,
)
from hisadmin.core import keys
from worklists.persistence import generations
from worklists.projection.census import CENSUS, OPEN_BUCKET
from worklists.projection.rows import MEDS_DUE, MY_PATIENTS, OBS_DUE, SHIFT_BEDS
from worklists.projection.state import Row, RowKey

# Contents that change on every write of a row, whatever it shows.
VOLATILE = ("seq", "projectedAt")


WARD = "Ward"  # layout 2: the partition of one ward's lists
WARD_VIEWS = (MEDS_DUE, MY_PATIENTS, OBS_DUE, SHIFT_BEDS)  # bucketed by the ward's id
_OPEN = f"_{OPEN_BUCKET}"  # the census's open stays: bucket ``<ward>_open``


def _ward(view: str, bucket: str) -> str | None:
    """The ward whose partition holds this view bucket in layout 2 (None: its own)."""
    if view in WARD_VIEWS:
        return bucket
    if view == CENSUS and bucket.endswith(_OPEN):
        return bucket[:-len(_OPEN)]
    return None


def ward_buckets(ward: str) -> list[tuple[str, str]]:
    """The view buckets a ward's partition holds in layout 2: ``(view, bucket)``."""
    return [(view, ward) for view in WARD_VIEWS] + [(CENSUS, f"{ward}{_OPEN}")]


def _place(store: DocumentStore, view: str, gen: int, bucket: str) -> tuple[str, str]:
    """The partition of a view bucket in generation ``gen`` and its rows' id prefix."""
    ward = _ward(view, bucket) if generations.layout(store, gen) >= 2 else None
    if ward is None:
        return keys.view(view, f"g{gen}_{bucket}"), ""
    return keys.view(WARD, f"g{gen}_{ward}"), f"{view}:"


def view_pk(store: DocumentStore, view: str, generation: int, bucket: str) -> str:
    """The partition of one view bucket in one generation: ``V_<View>_g<gen>_<bucket>``, or
    the ward's ``V_Ward_g<gen>_<ward>`` (a rebuild writes generation n+1 beside n, then
    switches the generation pointer)."""
    return _place(store, view, generation, bucket)[0]


def doc_id(store: DocumentStore, gen: int, key: RowKey) -> tuple[str, str]:
    """The partition and document id of row ``key`` in generation ``gen``."""
    view, bucket, row_id = key
    pk, prefix = _place(store, view, gen, bucket)
    return pk, prefix + row_id


def _filtered(store: DocumentStore, view: str, gen: int, bucket: str, query: Query
              ) -> tuple[str, Query, str]:
    """The partition, the query (narrowed to the view's rows where the partition is
    shared) and the id prefix of a view bucket's rows."""
    pk, prefix = _place(store, view, gen, bucket)
    if prefix:
        query = Query(where=(*query.where, Cond("docSubType", "=", view)),
                      order_by=query.order_by)
    return pk, query, prefix


def bucket_docs(store: DocumentStore, gen: int, view: str, bucket: str) -> list[Document]:
    """Every row document of one view bucket, as stored (one query; for small buckets and
    checks)."""
    pk, query, _ = _filtered(store, view, gen, bucket, Query())
    return store.query_all(pk, query, page_size=1000)


def row_id_of(doc: Document) -> str:
    """The row id of a view row document (its id without the view's prefix)."""
    prefix = f"{doc.get('docSubType')}:"
    doc_id_ = str(doc["id"])
    return doc_id_[len(prefix):] if doc_id_.startswith(prefix) else doc_id_


@dataclass(frozen=True)
class StoredRow:
    contents: dict[str, Any]  # as stored: display fields, seq, projectedAt
    query: dict[str, Any]  # the top-level Query* fields
    etag: str

    @property
    def seq(self) -> int:
        """The sequence of the state this row was projected from."""
        return int(self.contents.get("seq", 0))

    def shows(self, row: Row) -> bool:
        """Whether this stored row shows what ``row`` says (volatile fields aside)."""
        stored = {k: v for k, v in self.contents.items() if k not in VOLATILE}
        wanted = {k: v for k, v in row.contents.items() if k not in VOLATILE}
        return stored == wanted and all(self.query.get(k) == v for k, v in row.query.items())


def _document(store: DocumentStore, row: Row, gen: int, seq: int) -> Document:
    pk, row_doc_id = doc_id(store, gen, row.key)
    return wrap(doc_id=row_doc_id, pk=pk, doc_type="ViewRow",
                sub_type=row.view, query_fields=row.query,
                contents={**row.contents, "seq": seq,
                          "projectedAt": datetime.now(UTC).isoformat()})


def _stored(doc: Document) -> StoredRow:
    return StoredRow(doc["docContents"], {k: v for k, v in doc.items() if k.startswith("Query")},
                     doc["_etag"])


def read_row(store: DocumentStore, gen: int, key: RowKey) -> StoredRow | None:
    doc = store.try_read(*doc_id(store, gen, key))
    return None if doc is None else _stored(doc)


def bucket_rows(store: DocumentStore, gen: int, view: str, bucket: str
                ) -> dict[RowKey, StoredRow]:
    """Every row of one view bucket, by key (one query; for small buckets)."""
    return {(view, bucket, row_id_of(doc)): _stored(doc)
            for doc in bucket_docs(store, gen, view, bucket)}


def write_row(store: DocumentStore, row: Row, gen: int, seq: int,
              previous: StoredRow | None) -> str:
    """Create the row (``previous`` None) or replace ``previous`` under its etag; returns
    the etag it has now."""
    doc = _document(store, row, gen, seq)
    if previous is None:
        return str(store.create(doc)["_etag"])
    return str(store.replace(doc, if_match=previous.etag)["_etag"])


def write_op(store: DocumentStore, row: Row, gen: int, seq: int, etag: str | None
             ) -> tuple[str, BatchOp]:
    """The partition and operation that create the row (``etag`` None) or replace it as it
    was at ``etag``, without reading it."""
    doc = _document(store, row, gen, seq)
    op = BatchOp.create(doc) if etag is None else BatchOp.replace(doc, if_match=etag)
    return doc["partitionKey"], op


def delete_op(store: DocumentStore, gen: int, key: RowKey, etag: str) -> tuple[str, BatchOp]:
    """The partition and operation that delete the row as it was at ``etag``."""
    pk, row_doc_id = doc_id(store, gen, key)
    return pk, BatchOp.delete(row_doc_id, if_match=etag)


def execute(store: DocumentStore, pk: str, ops: Sequence[BatchOp]) -> list[str | None]:
    """Run ``ops`` in partition ``pk``: one call, a transactional batch when there are
    several; returns each operation's new etag (None for a delete). Raises the store's
    error (``errors.BatchFailed`` for a batch)."""
    if len(ops) == 1:
        op = ops[0]
        if op.doc is None:
            store.delete(pk, op.doc_id, if_match=op.if_match)
            return [None]
        done = (store.create(op.doc) if op.kind == "create"
                else store.replace(op.doc, if_match=op.if_match))
        return [str(done["_etag"])]
    return [None if doc is None else str(doc["_etag"])
            for doc in store.execute_batch(pk, ops)]


def delete_row(store: DocumentStore, gen: int, key: RowKey, *, etag: str | None = None) -> None:
    """Delete the row (only if it is still ``etag``, when given)."""
    store.delete(*doc_id(store, gen, key), if_match=etag)


def create_rows(store: DocumentStore, gen: int, rows: Sequence[tuple[Row, int]]) -> list[str]:
    """Create ``(row, seq)`` rows of ONE view bucket in one transactional batch: all or none;
    returns their etags.

    Raises ``errors.BatchFailed`` whose ``index`` is the row that failed (it exists).
    """
    docs = [_document(store, row, gen, seq) for row, seq in rows]
    done = store.execute_batch(docs[0]["partitionKey"], [BatchOp.create(doc) for doc in docs])
    return [str(doc["_etag"]) for doc in done if doc is not None]


def delete_rows(store: DocumentStore, gen: int, keys_: Sequence[RowKey]) -> None:
    """Delete these rows whatever their etag, a batch per view partition (each row alone
    where a batch fails: one was gone already)."""
    by_pk: dict[str, list[str]] = {}
    for key in keys_:
        pk, row_doc_id = doc_id(store, gen, key)
        by_pk.setdefault(pk, []).append(row_doc_id)
    for pk, ids in by_pk.items():
        for start in range(0, len(ids), MAX_BATCH_OPERATIONS):
            chunk = ids[start:start + MAX_BATCH_OPERATIONS]
            try:
                store.execute_batch(pk, [BatchOp.delete(row_id) for row_id in chunk])
            except errors.BatchFailed:
                for row_id in chunk:
                    with suppress(errors.NotFound):
                        store.delete(pk, row_id)


def unlike(store: DocumentStore, gen: int, expected: dict[RowKey, Row]
           ) -> list[tuple[str, RowKey]]:
    """The expected rows the store does not show as expected: ("missing" | "stale", key)."""
    found = []
    for key, row in expected.items():
        got = read_row(store, gen, key)
        if got is None or not got.shows(row):
            found.append(("missing" if got is None else "stale", key))
    return found


def page_rows(store: DocumentStore, gen: int, view: str, bucket: str, query: Query, *,
              page_size: int, continuation: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of a view bucket's rows (their stored contents) and the next page's token."""
    pk, query, _ = _filtered(store, view, gen, bucket, query)
    page = store.query(pk, query, page_size=page_size, continuation=continuation)
    return [doc["docContents"] for doc in page.items], page.continuation


def page_keyed_rows(store: DocumentStore, gen: int, view: str, bucket: str, query: Query, *,
                    page_size: int, continuation: str | None
                    ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], str | None]:
    """Like :func:`page_rows`, each row with its indexed ``Query*`` fields (to merge rows of
    several buckets in the query's order)."""
    pk, query, _ = _filtered(store, view, gen, bucket, query)
    page = store.query(pk, query, page_size=page_size, continuation=continuation)
    return [(doc["docContents"], {k: v for k, v in doc.items() if k.startswith("Query")}
             | {"id": doc["id"]}) for doc in page.items], page.continuation


def count_rows(store: DocumentStore, gen: int, view: str, bucket: str, query: Query) -> int:
    """How many rows of the bucket match ``query``."""
    pk, query, _ = _filtered(store, view, gen, bucket, query)
    return store.count_query(pk, query)
