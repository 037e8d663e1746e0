"""Unit of work: an identity map of loaded documents and one atomic batch per commit.

Nothing is written unless :meth:`UnitOfWork.commit` is called. A commit writes the changes of
ONE partition as one transactional batch, each loaded document guarded by the etag it was
read with, so a concurrent change makes the whole commit fail with :class:`StaleWrite`.

A command that must touch a second partition (a unique-key hold, say) writes it directly
on the store before the commit and removes it again if the commit fails (reserve-then-commit):
``commit()`` refuses to split changes across partitions silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cosmos_backend import errors
from cosmos_backend.store import BatchOp, Document, DocumentStore, Page, Query, iter_query


class StaleWrite(errors.PreconditionFailed):
    """A document changed (or appeared) after this unit of work read it."""

    def __init__(self, pk: str, doc_id: str, message: str = "") -> None:
        super().__init__(message or f"document {doc_id!r} in {pk!r} was changed meanwhile")
        self.pk = pk
        self.doc_id = doc_id


class MultiPartitionCommit(errors.InvalidRequest):
    pass


@dataclass
class _Tracked:
    doc: Document
    etag: str | None  # None: new document, to be created
    state: str  # "clean" | "new" | "dirty" | "deleted"


class UnitOfWork:
    """Tracks reads and writes against one store; commit applies them atomically."""

    def __init__(self, store: DocumentStore,
                 before_commit: Callable[[], object] | None = None) -> None:
        self.store = store
        # Called once before a commit that writes something (admission control: a command
        # may be held briefly while the views catch up); reads never call it.
        self.before_commit = before_commit
        self._tracked: dict[tuple[str, str], _Tracked] = {}
        self._order: list[tuple[str, str]] = []
        self.committed: list[Document] = []

    # ------------------------------------------------------------------ reads
    def get(self, pk: str, doc_id: str) -> Document:
        """Return a private copy of the document, tracked with its etag; raises NotFound."""
        key = (pk, doc_id)
        tracked = self._tracked.get(key)
        if tracked is not None:
            if tracked.state == "deleted":
                raise errors.NotFound(f"document {doc_id!r} was deleted in this unit of work")
            return tracked.doc
        doc = self.store.read(pk, doc_id)
        self._tracked[key] = _Tracked(doc=doc, etag=doc.get("_etag"), state="clean")
        return doc

    def try_get(self, pk: str, doc_id: str) -> Document | None:
        try:
            return self.get(pk, doc_id)
        except errors.NotFound:
            return None

    def query(
        self, pk: str, query: Query, *, page_size: int = 50, continuation: str | None = None
    ) -> Page:
        """Query the store; returned documents are tracked unless already in the map."""
        page = self.store.query(pk, query, page_size=page_size, continuation=continuation)
        items = []
        for doc in page.items:
            key = (pk, doc["id"])
            if key not in self._tracked:
                self._tracked[key] = _Tracked(doc=doc, etag=doc.get("_etag"), state="clean")
            items.append(self._tracked[key].doc)
        return Page(items=items, continuation=page.continuation)

    def query_all(self, pk: str, query: Query) -> list[Document]:
        """Every result of ``query`` in ``pk``, tracked as :meth:`query` tracks them."""
        return list(iter_query(self, pk, query, page_size=200))

    # ------------------------------------------------------------------ writes
    def add(self, doc: Document) -> Document:
        """Register a new document; the commit creates it (409 → StaleWrite if it exists)."""
        key = (doc["partitionKey"], doc["id"])
        if key in self._tracked and self._tracked[key].state != "deleted":
            raise errors.Conflict(f"document {doc['id']!r} is already in this unit of work")
        self._tracked[key] = _Tracked(doc=doc, etag=None, state="new")
        self._order.append(key)
        return doc

    def update(self, doc: Document) -> Document:
        """Mark a loaded document changed; it is replaced with If-Match on its read etag."""
        key = (doc["partitionKey"], doc["id"])
        tracked = self._tracked.get(key)
        if tracked is None:
            raise errors.InvalidRequest(f"document {doc['id']!r} was not loaded by this unit of work")
        tracked.doc = doc
        if tracked.state == "clean":
            tracked.state = "dirty"
            self._order.append(key)
        return doc

    def delete(self, doc: Document) -> None:
        key = (doc["partitionKey"], doc["id"])
        tracked = self._tracked.get(key)
        if tracked is None:
            raise errors.InvalidRequest(f"document {doc['id']!r} was not loaded by this unit of work")
        if tracked.state == "new":
            self._order.remove(key)
            del self._tracked[key]
            return
        if tracked.state == "clean":
            self._order.append(key)
        tracked.state = "deleted"

    def expect_etag(self, doc: Document, etag: str | None) -> None:
        """Fail now if ``doc`` is not at ``etag`` (the version a form or If-Match was based on)."""
        if etag is not None and doc.get("_etag") != etag:
            raise StaleWrite(doc["partitionKey"], doc["id"])

    # ------------------------------------------------------------------ commit
    def pending(self) -> list[tuple[str, BatchOp]]:
        ops: list[tuple[str, BatchOp]] = []
        for key in self._order:
            tracked = self._tracked[key]
            pk, doc_id = key
            if tracked.state == "new":
                ops.append((pk, BatchOp.create(_strip(tracked.doc))))
            elif tracked.state == "dirty":
                ops.append((pk, BatchOp.replace(_strip(tracked.doc), if_match=tracked.etag)))
            elif tracked.state == "deleted":
                ops.append((pk, BatchOp.delete(doc_id, if_match=tracked.etag)))
        return ops

    def commit(self) -> list[Document]:
        """Write every change as one batch in one partition; raises StaleWrite on a conflict."""
        ops = self.pending()
        if not ops:
            return []
        partitions = {pk for pk, _ in ops}
        if len(partitions) > 1:
            raise MultiPartitionCommit(
                f"a unit of work commits one partition, this one touches {sorted(partitions)}; "
                "write the other partition explicitly first (reserve-then-commit)"
            )
        pk = partitions.pop()
        batch = [op for _, op in ops]
        if self.before_commit is not None:
            self.before_commit()
        try:
            results = self.store.execute_batch(pk, batch)
        except errors.BatchFailed as exc:
            if isinstance(exc.cause, (errors.PreconditionFailed, errors.Conflict, errors.NotFound)):
                raise StaleWrite(pk, batch[exc.index].doc_id) from exc
            raise
        written = [doc for doc in results if doc is not None]
        for doc in written:
            self._tracked[(pk, doc["id"])] = _Tracked(doc=doc, etag=doc["_etag"], state="clean")
        for op in batch:
            if op.kind == "delete":
                self._tracked.pop((pk, op.doc_id), None)
        self._order.clear()
        self.committed.extend(written)
        return written

    def rollback(self) -> None:
        for key in self._order:
            self._tracked.pop(key, None)
        self._order.clear()

    def __enter__(self) -> UnitOfWork:
        return self

    def __exit__(self, *exc: object) -> None:
        self.rollback()


def _strip(doc: Document) -> Document:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


UowFactory = Callable[[], UnitOfWork]

