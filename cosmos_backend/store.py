"""The store contract shared by the embedded engine and the Azure Cosmos DB adapter.

A store is one container: documents addressed by ``(partitionKey, id)``, each carrying
``_etag`` (changes on every write), ``_ts`` (epoch seconds of the last write) and ``_lsn``
(position in the change feed). Everything here is plain data so the contract suite can run
the same calls against every backend.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from cosmos_backend import errors

Document = dict[str, Any]

MAX_DOCUMENT_BYTES = 2 * 1024 * 1024
MAX_BATCH_OPERATIONS = 100
PARTITION_KEY_PATH = "partitionKey"
SYSTEM_PROPERTIES = ("_etag", "_ts", "_lsn", "_rid", "_self", "_attachments")
# Paths a query may name that hold a scalar of the store's own (never an array).
SCALAR_PATHS = ("id", "partitionKey", "_ts", "_lsn")
_BAD_ID = re.compile(r"[/\\?#]")
_PATH_SEGMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# --------------------------------------------------------------------------- queries
Op = Literal["=", "!=", "<", "<=", ">", ">=", "startswith", "in", "array_contains"]


@dataclass(frozen=True)
class Cond:
    """One filter term: ``path`` is dotted (``docContents.wardId``)."""

    path: str
    op: Op
    value: Any


@dataclass(frozen=True)
class Query:
    """A single-partition query in the subset both backends execute identically.

    Results are ordered by ``order_by`` and then by ``id`` ascending, so paging is total.
    """

    where: tuple[Cond, ...] = ()
    order_by: tuple[tuple[str, Literal["ASC", "DESC"]], ...] = ()

    def ordering(self) -> tuple[tuple[str, str], ...]:
        """``order_by`` plus ``id`` as the tie-break, in the direction of the last key.

        Following the last key's direction lets one ascending composite index serve both
        directions (Cosmos DB and SQLite both read an index backwards only when every key
        is reversed), which halves the indexes a sortable view needs.
        """
        keys = tuple(self.order_by)
        if not any(p == "id" for p, _ in keys):
            last = str(keys[-1][1]).upper() if keys else "ASC"
            keys = keys + (("id", last),)
        return keys


@dataclass
class Page:
    items: list[Document]
    continuation: str | None


@dataclass
class FeedPage:
    """Latest versions of documents changed after the given continuation, in feed order."""

    items: list[Document]
    continuation: str


# --------------------------------------------------------------------------- batches
BatchKind = Literal["create", "replace", "upsert", "delete"]


@dataclass(frozen=True)
class BatchOp:
    kind: BatchKind
    doc: Document | None = None
    id: str | None = None
    if_match: str | None = None

    @property
    def doc_id(self) -> str:
        return self.id if self.doc is None else self.doc["id"]

    @classmethod
    def create(cls, doc: Document) -> BatchOp:
        return cls("create", doc=doc)

    @classmethod
    def replace(cls, doc: Document, if_match: str | None = None) -> BatchOp:
        return cls("replace", doc=doc, if_match=if_match)

    @classmethod
    def upsert(cls, doc: Document, if_match: str | None = None) -> BatchOp:
        return cls("upsert", doc=doc, if_match=if_match)

    @classmethod
    def delete(cls, id: str, if_match: str | None = None) -> BatchOp:
        return cls("delete", id=id, if_match=if_match)


# --------------------------------------------------------------------------- container spec
@dataclass(frozen=True)
class ContainerSpec:
    """What ``cosmos_init`` provisions: name, TTL and indexing policy (Cosmos JSON shape)."""

    name: str
    default_ttl: int | None = -1  # -1: TTL on, items live until their own ``ttl``
    indexing_policy: Mapping[str, Any] = field(default_factory=dict)
    partition_key_path: str = "/partitionKey"


# --------------------------------------------------------------------------- validation
def clean_document(doc: Mapping[str, Any], encoded_size: int | None = None) -> Document:
    """Validate ``doc`` for writing and return it without system properties."""
    if not isinstance(doc, Mapping):
        raise errors.InvalidRequest("a document must be a JSON object")
    validate_id(doc.get("id"))
    pk = doc.get(PARTITION_KEY_PATH)
    validate_partition_key(pk)
    if encoded_size is not None and encoded_size > MAX_DOCUMENT_BYTES:
        raise errors.DocumentTooLarge(
            f"document {doc['id']!r} is {encoded_size} bytes; the limit is {MAX_DOCUMENT_BYTES}"
        )
    return {k: v for k, v in doc.items() if k not in SYSTEM_PROPERTIES}


def validate_id(doc_id: Any) -> None:
    if not isinstance(doc_id, str) or not doc_id:
        raise errors.InvalidId("a document needs a non-empty string 'id'")
    if _BAD_ID.search(doc_id):
        raise errors.InvalidId(f"id {doc_id!r} contains one of / \\ ? # which Cosmos DB rejects")
    if len(doc_id) > 255:
        raise errors.InvalidId("an id is at most 255 characters")


def validate_partition_key(pk: Any) -> None:
    if not isinstance(pk, str) or not pk:
        raise errors.MissingPartitionKey(
            f"a document needs a non-empty string '{PARTITION_KEY_PATH}'"
        )


def validate_batch(pk: str, ops: Sequence[BatchOp]) -> None:
    validate_partition_key(pk)
    if not ops:
        raise errors.InvalidRequest("a batch needs at least one operation")
    if len(ops) > MAX_BATCH_OPERATIONS:
        raise errors.BatchTooLarge(
            f"a batch holds at most {MAX_BATCH_OPERATIONS} operations, got {len(ops)}"
        )
    for op in ops:
        if op.doc is not None:
            if op.doc.get(PARTITION_KEY_PATH) != pk:
                raise errors.CrossPartitionBatch(
                    f"document {op.doc.get('id')!r} has partition key "
                    f"{op.doc.get(PARTITION_KEY_PATH)!r}, the batch is for {pk!r}"
                )
        else:
            validate_id(op.id)


def item_ttl(doc: Mapping[str, Any], default_ttl: int | None) -> int | None:
    """Seconds ``doc`` lives after a write in a container with ``default_ttl``; None: forever.

    The Cosmos DB rule: with TTL off on the container (``None``) an item's ``ttl`` is ignored;
    otherwise the item's ``ttl`` (or the default) is -1 or null for "never", or a positive
    integer, and anything else is refused with :class:`InvalidRequest`.
    """
    if default_ttl is None:
        return None
    ttl = doc.get("ttl", default_ttl)
    if ttl is None or ttl == -1:
        return None
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0:  # JSON true is no ttl
        raise errors.InvalidRequest(f"ttl must be a positive integer or -1, got {ttl!r}")
    return ttl


def validate_path(path: str) -> None:
    """A dotted property path of plain identifiers (``docContents.wardId``)."""
    if not all(_PATH_SEGMENT.match(part) for part in path.split(".")):
        raise errors.InvalidRequest(f"unsupported property path {path!r}")


def value_kind(value: Any) -> type:
    """The JSON kind of a comparison value: ``bool``, ``int`` (every number) or ``str``.

    Raises :class:`InvalidRequest` for anything else: queries compare scalars only.
    """
    if isinstance(value, bool):
        return bool
    if isinstance(value, (int, float)):
        return int
    if isinstance(value, str):
        return str
    raise errors.InvalidRequest(f"cannot compare with {type(value).__name__} values")


def validate_query(query: Query) -> None:
    """Refuse what neither backend executes: bad paths, operators, values, sort directions.

    Both query translators call this first, so bad input fails identically everywhere.
    """
    ordering = query.ordering()
    for path, _ in ordering:
        validate_path(path)
    for _, direction in ordering:
        if direction.upper() not in ("ASC", "DESC"):
            raise errors.InvalidRequest(f"unsupported sort direction {direction!r}")
    for cond in query.where:
        _validate_cond(cond)


def _validate_cond(cond: Cond) -> None:
    validate_path(cond.path)
    op, value = cond.op, cond.value
    if op in ("=", "!="):
        if value is not None:
            value_kind(value)
    elif op in ("<", "<=", ">", ">="):
        if isinstance(value, bool):
            raise errors.InvalidRequest("booleans can only be compared with = and !=")
        value_kind(value)
    elif op == "startswith":
        if not isinstance(value, str):
            raise errors.InvalidRequest("startswith needs a string")
    elif op == "in":
        for v in list(value):
            if v is not None:
                value_kind(v)
    elif op == "array_contains":
        if cond.path in SCALAR_PATHS:
            raise errors.InvalidRequest("array_contains needs a document path")
        if value is not None:
            value_kind(value)
    else:
        raise errors.InvalidRequest(f"unsupported operator {op!r}")


# --------------------------------------------------------------------------- the contract
class DocumentStore(abc.ABC):
    """One container. All methods are synchronous and safe to call from several processes."""

    spec: ContainerSpec

    @abc.abstractmethod
    def read(self, pk: str, doc_id: str) -> Document:
        """Point read; raises :class:`NotFound`."""

    @abc.abstractmethod
    def create(self, doc: Document) -> Document:
        """Insert; raises :class:`Conflict` when the id exists in the partition."""

    @abc.abstractmethod
    def replace(self, doc: Document, *, if_match: str | None = None) -> Document:
        """Replace an existing document; :class:`NotFound` or :class:`PreconditionFailed`."""

    @abc.abstractmethod
    def upsert(self, doc: Document, *, if_match: str | None = None) -> Document: ...

    @abc.abstractmethod
    def delete(self, pk: str, doc_id: str, *, if_match: str | None = None) -> None: ...

    @abc.abstractmethod
    def execute_batch(self, pk: str, ops: Sequence[BatchOp]) -> list[Document | None]:
        """Apply ``ops`` atomically in partition ``pk``; raises :class:`BatchFailed`."""

    @abc.abstractmethod
    def query(
        self, pk: str, query: Query, *, page_size: int = 50, continuation: str | None = None
    ) -> Page:
        """One page of a single-partition query; pass ``continuation`` back for the next."""

    @abc.abstractmethod
    def feed_ranges(self) -> list[str]:
        """Opaque ids of the ranges the change feed can be read by, covering every key."""

    @abc.abstractmethod
    def read_feed(
        self, feed_range: str, *, continuation: str | None = None, max_items: int = 1000
    ) -> FeedPage:
        """Changes in ``feed_range`` after ``continuation`` (``None``: from the beginning)."""

    def count_query(self, pk: str, query: Query) -> int:
        """How many documents of ``pk`` match ``query``'s terms (its ordering is ignored).

        This default reads every page; the backends count in the engine."""
        return sum(1 for _ in iter_query(self, pk, Query(where=query.where), page_size=1000))

    def query_all(self, pk: str, query: Query, *, page_size: int = 500) -> list[Document]:
        """Every result of ``query`` in ``pk``, all pages read."""
        return list(iter_query(self, pk, query, page_size=page_size))

    def try_read(self, pk: str, doc_id: str) -> Document | None:
        try:
            return self.read(pk, doc_id)
        except errors.NotFound:
            return None

    def grouped(self) -> AbstractContextManager[None]:
        """Group this thread's writes until the block ends into as few commits as the
        backend can, without changing what each call means: every batch stays atomic on its
        own, and one that fails is undone alone (its error raised as always). A hint: Cosmos
        DB has no transaction across partitions, so by default nothing changes; the embedded
        store commits the block's writes once, taking its write lock once (a projection
        applies a change-feed page so). An exception leaving the block undoes the block's
        writes where they were grouped: the caller retries the block (idempotent work)."""
        return nullcontext()

    def close(self) -> None:  # noqa: B027 - an optional hook: a store may hold nothing to release
        """Release connections."""


# --------------------------------------------------------------------------- walking pages
class Pageable(Protocol):
    """Anything that answers a query one page at a time: a store or a unit of work."""

    def query(self, pk: str, query: Query, *, page_size: int = ...,
              continuation: str | None = None) -> Page: ...


def iter_query(source: Pageable, pk: str, query: Query, *,
               page_size: int = 500) -> Iterator[Document]:
    """Every result of ``query`` in ``pk``, reading page after page until the last."""
    token: str | None = None
    while True:
        page = source.query(pk, query, page_size=page_size, continuation=token)
        yield from page.items
        token = page.continuation
        if not token:
            return


def iter_feed(store: DocumentStore, feed_range: str, continuation: str | None = None, *,
              max_items: int = 1000) -> Iterator[FeedPage]:
    """Pages of ``feed_range`` after ``continuation`` until the range is caught up.

    The last page yielded is the empty one that shows it: its ``continuation`` is where the
    next walk resumes. Keep a page's continuation only once its items are handled.
    """
    while True:
        page = store.read_feed(feed_range, continuation=continuation, max_items=max_items)
        yield page
        if not page.items:
            return
        continuation = page.continuation
