"""Two containers behind one store handle, chosen by partition key.

Every operation of the contract names one partition (a point read, a batch, a query), so a
partition can live in either of two containers without its callers knowing: the product keeps
its clinical record in one container and the views its projections derive from it in a
second (docs/data-model.md, "The views container"). The change feed is the first container's:
the views are fed by it and feed nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from cosmos_backend.store import (
    BatchOp,
    Document,
    DocumentStore,
    FeedPage,
    Page,
    Query,
)


class RoutedStore(DocumentStore):
    """``primary`` for every partition, ``views`` for those ``is_view(pk)`` names."""

    def __init__(self, primary: DocumentStore, views: DocumentStore,
                 is_view: Callable[[str], bool]) -> None:
        self.primary, self.views, self.is_view = primary, views, is_view
        self.spec = primary.spec

    def container_for(self, pk: str) -> DocumentStore:
        return self.views if self.is_view(pk) else self.primary

    def read(self, pk: str, doc_id: str) -> Document:
        return self.container_for(pk).read(pk, doc_id)

    def try_read(self, pk: str, doc_id: str) -> Document | None:
        return self.container_for(pk).try_read(pk, doc_id)

    def create(self, doc: Document) -> Document:
        return self.container_for(doc.get("partitionKey", "")).create(doc)

    def replace(self, doc: Document, *, if_match: str | None = None) -> Document:
        return self.container_for(doc.get("partitionKey", "")).replace(doc, if_match=if_match)

    def upsert(self, doc: Document, *, if_match: str | None = None) -> Document:
        return self.container_for(doc.get("partitionKey", "")).upsert(doc, if_match=if_match)

    def delete(self, pk: str, doc_id: str, *, if_match: str | None = None) -> None:
        self.container_for(pk).delete(pk, doc_id, if_match=if_match)

    def execute_batch(self, pk: str, ops: Sequence[BatchOp]) -> list[Document | None]:
        return self.container_for(pk).execute_batch(pk, ops)

    def query(self, pk: str, query: Query, *, page_size: int = 50,
              continuation: str | None = None) -> Page:
        return self.container_for(pk).query(pk, query, page_size=page_size,
                                            continuation=continuation)

    def count_query(self, pk: str, query: Query) -> int:
        return self.container_for(pk).count_query(pk, query)

    def query_all(self, pk: str, query: Query, *, page_size: int = 500) -> list[Document]:
        return self.container_for(pk).query_all(pk, query, page_size=page_size)

    def feed_ranges(self) -> list[str]:
        return self.primary.feed_ranges()

    def read_feed(self, feed_range: str, *, continuation: str | None = None,
                  max_items: int = 1000) -> FeedPage:
        return self.primary.read_feed(feed_range, continuation=continuation,
                                      max_items=max_items)

    def grouped(self) -> AbstractContextManager[None]:
        """The views container's writes grouped: the projections are what groups them."""
        return self.views.grouped()

    def close(self) -> None:
        self.primary.close()
        self.views.close()

    @property
    def request_charge_total(self) -> float:
        """Request units both containers charged (Azure only: AttributeError elsewhere)."""
        return self.primary.request_charge_total + self.views.request_charge_total  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:  # a backend's extras (path, count, …)
        if name in ("primary", "views", "is_view"):  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.primary, name)
