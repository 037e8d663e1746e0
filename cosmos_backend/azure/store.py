"""Azure Cosmos DB adapter over the official ``azure-cosmos`` SDK.

Inputs are validated with the same helpers as the embedded engine before anything is sent,
so bad input fails identically on both backends. Every call's request charge (RU) is added to
:attr:`AzureCosmosStore.charges` and logged at DEBUG on ``cosmos_backend.ru``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson
from azure.core import MatchConditions
from azure.cosmos import ContainerProxy, CosmosClient
from azure.cosmos import exceptions as cx

from cosmos_backend import errors
from cosmos_backend.azure.client import (
    PROFILES,
    ChargeHook,
    Charges,
    build_client,
    charge_of,
    map_error,
)
from cosmos_backend.azure.sql import to_sql
from cosmos_backend.store import (
    BatchOp,
    ContainerSpec,
    Document,
    DocumentStore,
    FeedPage,
    Page,
    Query,
    clean_document,
    item_ttl,
    validate_batch,
    validate_id,
    validate_partition_key,
)

T = TypeVar("T")
_HIDDEN = ("_rid", "_self", "_attachments")  # Cosmos bookkeeping the contract does not expose


def _public(doc: dict[str, Any]) -> Document:
    return {k: v for k, v in doc.items() if k not in _HIDDEN}


class AzureCosmosStore(DocumentStore):
    """One Cosmos DB container. ``client`` is closed by :meth:`close` when given."""

    def __init__(self, container: ContainerProxy, spec: ContainerSpec, *,
                 client: CosmosClient | None = None, profile: str = "web") -> None:
        self.container = container
        self.spec = spec
        self.charges = Charges()
        self._client = client
        self._timeout = PROFILES[profile].operation_timeout_s

    @property
    def request_charge_total(self) -> float:
        return self.charges.total

    @property
    def request_charges(self) -> dict[str, float]:
        """RU spent per operation kind (read, create, query, feed, batch, ...)."""
        return self.charges.snapshot()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ------------------------------------------------------------------ plumbing
    def _call(self, kind: str, fn: Callable[[ChargeHook], T]) -> T:
        hook = ChargeHook()
        try:
            result = fn(hook)
        except cx.CosmosBatchOperationError as exc:
            self.charges.add(kind, hook.charge or charge_of(exc.headers))
            raise errors.BatchFailed(exc.error_index, map_error(exc)) from exc
        except Exception as exc:  # every SDK or transport failure becomes a StoreError
            self.charges.add(kind, hook.charge or charge_of(getattr(exc, "headers", None)))
            raise map_error(exc) from exc
        self.charges.add(kind, hook.charge)
        return result

    def _opts(self, hook: ChargeHook, if_match: str | None = None) -> dict[str, Any]:
        opts: dict[str, Any] = {"response_hook": hook, "timeout": self._timeout}
        if if_match is not None:
            opts.update(etag=if_match, match_condition=MatchConditions.IfNotModified)
        return opts

    def _checked(self, doc: Document) -> Document:
        body = orjson.dumps({k: v for k, v in doc.items() if not k.startswith("_")})
        clean = clean_document(doc, len(body))
        if "ttl" in clean:
            # The embedded engine's rule, checked before sending: Cosmos answers 400 too,
            # but only after a round trip and with a less specific message.
            item_ttl(clean, self.spec.default_ttl)
        return clean

    # ------------------------------------------------------------------ single operations
    def read(self, pk: str, doc_id: str) -> Document:
        validate_partition_key(pk)
        validate_id(doc_id)
        return _public(self._call("read", lambda h: self.container.read_item(
            doc_id, pk, **self._opts(h))))

    def create(self, doc: Document) -> Document:
        body = self._checked(doc)
        return _public(self._call("create", lambda h: self.container.create_item(
            body, **self._opts(h))))

    def replace(self, doc: Document, *, if_match: str | None = None) -> Document:
        body = self._checked(doc)
        return _public(self._call("replace", lambda h: self.container.replace_item(
            body["id"], body, **self._opts(h, if_match))))

    def upsert(self, doc: Document, *, if_match: str | None = None) -> Document:
        body = self._checked(doc)
        return _public(self._call("upsert", lambda h: self.container.upsert_item(
            body, **self._opts(h, if_match))))

    def delete(self, pk: str, doc_id: str, *, if_match: str | None = None) -> None:
        validate_partition_key(pk)
        validate_id(doc_id)
        self._call("delete", lambda h: self.container.delete_item(
            doc_id, pk, **self._opts(h, if_match)))

    def execute_batch(self, pk: str, ops: Sequence[BatchOp]) -> list[Document | None]:
        validate_batch(pk, ops)
        sdk_ops = [self._sdk_op(op) for op in ops]  # validates every document before sending
        results = self._call("batch", lambda h: self.container.execute_item_batch(
            batch_operations=sdk_ops, partition_key=pk, response_hook=h,
            timeout=self._timeout))
        out: list[Document | None] = []
        for op, result in zip(ops, results, strict=True):
            body = result.get("resourceBody")
            out.append(None if op.kind == "delete" or body is None else _public(body))
        return out

    def _sdk_op(self, op: BatchOp) -> tuple[Any, ...]:
        extra = {"if_match_etag": op.if_match} if op.if_match is not None else {}
        if op.kind == "delete":
            return ("delete", (op.id,), extra)
        body = self._checked(op.doc)  # type: ignore[arg-type]
        if op.kind == "create":
            return ("create", (body,))
        if op.kind == "replace":
            return ("replace", (body["id"], body), extra)
        return ("upsert", (body,), extra)

    # ------------------------------------------------------------------ queries
    def query(self, pk: str, query: Query, *, page_size: int = 50,
              continuation: str | None = None) -> Page:
        validate_partition_key(pk)
        if page_size < 1:
            raise errors.InvalidRequest("page_size must be at least 1")
        sql, params = to_sql(query)

        def fetch(hook: ChargeHook) -> tuple[list[Document], str | None]:
            pager = self.container.query_items(
                sql, parameters=params, partition_key=pk, max_item_count=page_size,
                response_hook=hook, timeout=self._timeout).by_page(continuation)
            items = [_public(d) for d in next(pager, [])]
            return items, pager.continuation_token

        items, token = self._call("query", fetch)
        return Page(items=items, continuation=token or None)

    def count_query(self, pk: str, query: Query) -> int:
        validate_partition_key(pk)
        sql, params = to_sql(query, count=True)

        def fetch(hook: ChargeHook) -> int:
            found = list(self.container.query_items(
                sql, parameters=params, partition_key=pk, response_hook=hook,
                timeout=self._timeout))
            return int(sum(found))  # one value, or one partial count per page

        return self._call("query", fetch)

    # ------------------------------------------------------------------ change feed
    def feed_ranges(self) -> list[str]:
        ranges = self._call("feed_ranges", lambda h: list(self.container.read_feed_ranges()))
        return [json.dumps(r, sort_keys=True) for r in ranges]

    def read_feed(self, feed_range: str, *, continuation: str | None = None,
                  max_items: int = 1000) -> FeedPage:
        def fetch(hook: ChargeHook) -> tuple[list[Document], str | None]:
            # The SDK's continuation already names its feed range; passing both is refused.
            where: dict[str, Any] = {"continuation": continuation} if continuation else {
                "feed_range": _parse_range(feed_range), "start_time": "Beginning"}
            pager = self.container.query_items_change_feed(
                max_item_count=max_items, response_hook=hook, timeout=self._timeout,
                **where).by_page()
            items = [_public(d) for d in next(pager, [])]
            return items, pager.continuation_token

        items, token = self._call("feed", fetch)
        return FeedPage(items=items, continuation=token or continuation or "")


def _parse_range(feed_range: str) -> dict[str, Any]:
    try:
        parsed = json.loads(feed_range)
    except ValueError as exc:
        raise errors.InvalidRequest(f"not a feed range of this store: {feed_range!r}") from exc
    if not isinstance(parsed, dict):
        raise errors.InvalidRequest(f"not a feed range of this store: {feed_range!r}")
    return parsed


# ---------------------------------------------------------------------- connecting
def connect(endpoint: str, key: str, database: str, spec: ContainerSpec, *,
            profile: str = "web", connection_verify: bool = True,
            enable_endpoint_discovery: bool | None = None) -> AzureCosmosStore:
    """A store on ``database``/``spec.name`` (which :func:`.provision.provision` creates).

    ``enable_endpoint_discovery=None`` turns discovery on for HTTPS endpoints (Azure, the
    emulator) and off for plain-HTTP test servers.
    """
    client = build_client(endpoint, key, profile=profile, connection_verify=connection_verify,
                          enable_endpoint_discovery=enable_endpoint_discovery)
    container = client.get_database_client(database).get_container_client(spec.name)
    return AzureCosmosStore(container, spec, client=client, profile=profile)
