"""A store wrapper that counts round trips and bytes, and an estimated Cosmos RU cost model.

The embedded store has no request charges, so the benchmark estimates what each call would
cost on Azure Cosmos DB from its size. The model is an ESTIMATE, deliberately simple:

* point read: 1 RU per started KB of the document (a missing document: 1 RU);
* write (create / replace / upsert, alone or in a batch): 5.5 RU per started KB with the
  product's narrow indexing policy (a default "index everything" policy costs more);
* delete: 5.5 RU;
* query page: 2.5 RU + 0.1 RU per KB returned;
* change-feed page: 1 RU + 0.1 RU per KB returned.

A transactional batch costs the sum of its operations. Against a real Cosmos endpoint the
Azure adapter records the measured ``x-ms-request-charge`` totals instead.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import orjson

from cosmos_backend import errors
from cosmos_backend.store import BatchOp, Document, DocumentStore, FeedPage, Page, Query

READ_RU_PER_KB = 1.0
WRITE_RU_PER_KB = 5.5
DELETE_RU = 5.5
QUERY_RU = 2.5
QUERY_RU_PER_KB = 0.1
FEED_RU = 1.0

COST_MODEL = {
    "point read": f"{READ_RU_PER_KB:g} RU per started KB",
    "write (create/replace/upsert, also inside a batch)": f"{WRITE_RU_PER_KB:g} RU per started KB",
    "delete": f"{DELETE_RU:g} RU",
    "query page": f"{QUERY_RU:g} RU + {QUERY_RU_PER_KB:g} RU per KB returned",
    "change-feed page": f"{FEED_RU:g} RU + {QUERY_RU_PER_KB:g} RU per KB returned",
}


def size(doc: Any) -> int:
    return len(orjson.dumps(doc, default=str))


def _kb(nbytes: int) -> int:
    return max(1, math.ceil(nbytes / 1024))


class Meter:
    """Totals of one measured span: calls by kind, bytes each way, estimated RU."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.bytes_out = 0  # written to the store
        self.bytes_in = 0  # returned by the store
        self.ru = 0.0

    def snapshot(self) -> dict[str, Any]:
        return {"round_trips": sum(self.calls.values()), "by_kind": dict(self.calls),
                "bytes_written": self.bytes_out, "bytes_read": self.bytes_in,
                "ru_estimate": round(self.ru, 2)}

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]


class CountingStore(DocumentStore):
    """Delegates every call to ``inner`` and meters it; behaviour is unchanged."""

    def __init__(self, inner: DocumentStore, meter: Meter | None = None) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.meter = meter or Meter()

    def __getattr__(self, name: str) -> Any:  # store-specific extras (path, count, …)
        return getattr(self.inner, name)

    def grouped(self) -> AbstractContextManager[None]:
        return self.inner.grouped()

    def _write(self, kind: str, doc: Document) -> None:
        n = size(doc)
        self.meter.calls[kind] += 1
        self.meter.bytes_out += n
        self.meter.ru += WRITE_RU_PER_KB * _kb(n)

    def read(self, pk: str, doc_id: str) -> Document:
        self.meter.calls["read"] += 1
        try:
            doc = self.inner.read(pk, doc_id)
        except errors.NotFound:
            self.meter.ru += READ_RU_PER_KB
            raise
        n = size(doc)
        self.meter.bytes_in += n
        self.meter.ru += READ_RU_PER_KB * _kb(n)
        return doc

    def count_query(self, pk: str, query: Query) -> int:
        self.meter.calls["query"] += 1
        self.meter.ru += READ_RU_PER_KB
        return self.inner.count_query(pk, query)

    def create(self, doc: Document) -> Document:
        self._write("create", doc)
        return self.inner.create(doc)

    def replace(self, doc: Document, *, if_match: str | None = None) -> Document:
        self._write("replace", doc)
        return self.inner.replace(doc, if_match=if_match)

    def upsert(self, doc: Document, *, if_match: str | None = None) -> Document:
        self._write("upsert", doc)
        return self.inner.upsert(doc, if_match=if_match)

    def delete(self, pk: str, doc_id: str, *, if_match: str | None = None) -> None:
        self.meter.calls["delete"] += 1
        self.meter.ru += DELETE_RU
        self.inner.delete(pk, doc_id, if_match=if_match)

    def execute_batch(self, pk: str, ops: Sequence[BatchOp]) -> list[Document | None]:
        self.meter.calls["batch"] += 1
        for op in ops:
            if op.doc is None:
                self.meter.ru += DELETE_RU
            else:
                n = size(op.doc)
                self.meter.bytes_out += n
                self.meter.ru += WRITE_RU_PER_KB * _kb(n)
        return self.inner.execute_batch(pk, ops)

    def query(self, pk: str, query: Query, *, page_size: int = 50,
              continuation: str | None = None) -> Page:
        page = self.inner.query(pk, query, page_size=page_size, continuation=continuation)
        n = sum(size(d) for d in page.items)
        self.meter.calls["query"] += 1
        self.meter.bytes_in += n
        self.meter.ru += QUERY_RU + QUERY_RU_PER_KB * n / 1024
        return page

    def feed_ranges(self) -> list[str]:
        return self.inner.feed_ranges()

    def read_feed(self, feed_range: str, *, continuation: str | None = None,
                  max_items: int = 100, **kwargs: Any) -> FeedPage:
        page = self.inner.read_feed(feed_range, continuation=continuation, max_items=max_items,
                                    **kwargs)
        n = sum(size(d) for d in page.items)
        self.meter.calls["feed"] += 1
        self.meter.bytes_in += n
        self.meter.ru += FEED_RU + QUERY_RU_PER_KB * n / 1024
        return page

    def close(self) -> None:
        self.inner.close()
