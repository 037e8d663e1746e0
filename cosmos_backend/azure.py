"""Azure Cosmos DB adapter over the official ``azure-cosmos`` SDK.

Inputs are validated with the same helpers as the embedded engine before anything is sent,
so bad input fails identically on both backends. Every operation's request charge (RU) is
recorded in :attr:`AzureCosmosStore.charges` and logged at DEBUG on ``cosmos_backend.ru``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson
from azure.core import MatchConditions
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey, documents
from azure.cosmos import exceptions as cx

from . import errors
from .store import (
    BatchOp,
    ContainerSpec,
    Document,
    DocumentStore,
    FeedPage,
    Page,
    Query,
    clean_document,
    validate_batch,
    validate_id,
    validate_partition_key,
)

log = logging.getLogger("cosmos_backend.ru")
T = TypeVar("T")

# Retry budgets: a web request should fail fast and tell the user; the relay can wait.
PROFILES = {
    "web": {"throttle_attempts": 3, "throttle_wait": 5, "timeout": 10},
    "relay": {"throttle_attempts": 9, "throttle_wait": 30, "timeout": 30},
}


class Charges:
    """Request units spent, in total and per operation kind (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0.0
        self.by_kind: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def add(self, kind: str, charge: float) -> None:
        with self._lock:
            self.total += charge
            self.by_kind[kind] += charge
            self.calls[kind] += 1


def _map_error(exc: Exception) -> errors.StoreError:
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc).splitlines()[0]
    if isinstance(exc, cx.CosmosResourceNotFoundError) or status == 404:
        return errors.NotFound(message)
    if isinstance(exc, cx.CosmosResourceExistsError) or status == 409:
        return errors.Conflict(message)
    if isinstance(exc, cx.CosmosAccessConditionFailedError) or status == 412:
        return errors.PreconditionFailed(message)
    if status == 429:
        return errors.Throttled(message)
    if status in (400, 413):
        return errors.InvalidRequest(message)
    if status in (408, 410, 449, 500, 503):
        return errors.Unavailable(message)
    return errors.StoreError(message)


def _public(doc: dict[str, Any]) -> Document:
    return {k: v for k, v in doc.items() if k not in ("_rid", "_self", "_attachments")}


class AzureCosmosStore(DocumentStore):
    def __init__(self, container: ContainerProxy, spec: ContainerSpec) -> None:
        self.container = container
        self.spec = spec
        self.charges = Charges()

    @property
    def request_charge_total(self) -> float:
        return self.charges.total

    def _call(self, kind: str, fn: Callable[[], T]) -> T:
        try:
            result = fn()
        except cx.CosmosBatchOperationError as exc:
            self._charge(kind)
            raise errors.BatchFailed(exc.error_index, _map_error(exc)) from exc
        except cx.CosmosHttpResponseError as exc:
            self._charge(kind)
            raise _map_error(exc) from exc
        self._charge(kind)
        return result

    def _charge(self, kind: str) -> None:
        headers = self.container.client_connection.last_response_headers or {}
        try:
            charge = float(headers.get("x-ms-request-charge", 0) or 0)
        except ValueError:
            charge = 0.0
        self.charges.add(kind, charge)
        log.debug("%s %.2f RU", kind, charge)

    @staticmethod
    def _checked(doc: Document) -> Document:
        body = orjson.dumps({k: v for k, v in doc.items() if not k.startswith("_")})
        return clean_document(doc, len(body))

    @staticmethod
    def _cond(if_match: str | None) -> dict[str, Any]:
        if if_match is None:
            return {}
        return {"etag": if_match, "match_condition": MatchConditions.IfNotModified}

    # ------------------------------------------------------------------ single operations
    def read(self, pk: str, doc_id: str) -> Document:
        validate_partition_key(pk)
        validate_id(doc_id)
        return _public(self._call("read", lambda: self.container.read_item(doc_id, pk)))

    def create(self, doc: Document) -> Document:
        body = self._checked(doc)
        return _public(self._call("create", lambda: self.container.create_item(body)))

    def replace(self, doc: Document, *, if_match: str | None = None) -> Document:
        body = self._checked(doc)
        return _public(self._call("replace", lambda: self.container.replace_item(
            body["id"], body, **self._cond(if_match))))

    def upsert(self, doc: Document, *, if_match: str | None = None) -> Document:
        body = self._checked(doc)
        return _public(self._call("upsert", lambda: self.container.upsert_item(
            body, **self._cond(if_match))))

    def delete(self, pk: str, doc_id: str, *, if_match: str | None = None) -> None:
        validate_partition_key(pk)
        validate_id(doc_id)
        self._call("delete", lambda: self.container.delete_item(
            doc_id, pk, **self._cond(if_match)))

    def execute_batch(self, pk: str, ops: Sequence[BatchOp]) -> list[Document | None]:
        validate_batch(pk, ops)
        sdk_ops: list[tuple[Any, ...]] = []
        for op in ops:
            extra = {"if_match_etag": op.if_match} if op.if_match is not None else {}
            if op.kind == "create":
                sdk_ops.append(("create", (self._checked(op.doc),)))  # type: ignore[arg-type]
            elif op.kind == "upsert":
                sdk_ops.append(("upsert", (self._checked(op.doc),), extra))  # type: ignore[arg-type]
            elif op.kind == "replace":
                body = self._checked(op.doc)  # type: ignore[arg-type]
                sdk_ops.append(("replace", (body["id"], body), extra))
            else:
                sdk_ops.append(("delete", (op.id,), extra))
        results = self._call("batch", lambda: self.container.execute_item_batch(
            batch_operations=sdk_ops, partition_key=pk))
        out: list[Document | None] = []
        for op, result in zip(ops, results, strict=True):
            body = result.get("resourceBody")
            out.append(None if op.kind == "delete" or body is None else _public(body))
        return out

    # ------------------------------------------------------------------ queries
    def query(self, pk: str, query: Query, *, page_size: int = 50,
              continuation: str | None = None) -> Page:
        validate_partition_key(pk)
        if page_size < 1:
            raise errors.InvalidRequest("page_size must be at least 1")
        from .cosmos_sql import to_sql

        sql, params = to_sql(query, pk)

        def fetch() -> tuple[list[Document], str | None]:
            pager = self.container.query_items(sql, parameters=params, partition_key=pk,
                                               max_item_count=page_size).by_page(continuation)
            items = [_public(d) for d in next(pager, [])]
            return items, pager.continuation_token

        items, token = self._call("query", fetch)
        return Page(items=items, continuation=token or None)

    # ------------------------------------------------------------------ change feed
    def feed_ranges(self) -> list[str]:
        ranges = self._call("feed_ranges", lambda: list(self.container.read_feed_ranges()))
        return [json.dumps(r, sort_keys=True) for r in ranges]

    def read_feed(self, feed_range: str, *, continuation: str | None = None,
                  max_items: int = 1000) -> FeedPage:
        def fetch() -> tuple[list[Document], str | None]:
            if continuation:
                it = self.container.query_items_change_feed(continuation=continuation,
                                                            max_item_count=max_items)
            else:
                it = self.container.query_items_change_feed(
                    feed_range=json.loads(feed_range), start_time="Beginning",
                    max_item_count=max_items)
            pager = it.by_page()
            items = [_public(d) for d in next(pager, [])]
            return items, pager.continuation_token

        items, token = self._call("feed", fetch)
        return FeedPage(items=items, continuation=token or continuation or "")


# ---------------------------------------------------------------------- connecting
def client(endpoint: str, key: str, *, profile: str = "web", connection_verify: bool = True,
           enable_endpoint_discovery: bool = True) -> CosmosClient:
    budget = PROFILES[profile]
    policy = documents.ConnectionPolicy()
    policy.EnableEndpointDiscovery = enable_endpoint_discovery
    policy.RequestTimeout = budget["timeout"]
    policy.RetryOptions = documents.RetryOptions(  # throttling (429) retries
        max_retry_attempt_count=budget["throttle_attempts"],
        max_wait_time_in_seconds=budget["throttle_wait"])
    policy.DisableSSLVerification = not connection_verify
    return CosmosClient(endpoint, credential=key, connection_policy=policy,
                        consistency_level="Session", connection_verify=connection_verify)


def _local(endpoint: str) -> bool:
    return endpoint.startswith("http://")


def connect(endpoint: str, key: str, database: str, spec: ContainerSpec, *,
            profile: str = "web", connection_verify: bool = True,
            enable_endpoint_discovery: bool | None = None) -> AzureCosmosStore:
    discovery = not _local(endpoint) if enable_endpoint_discovery is None else enable_endpoint_discovery
    cosmos = client(endpoint, key, profile=profile, connection_verify=connection_verify,
                    enable_endpoint_discovery=discovery)
    container = cosmos.get_database_client(database).get_container_client(spec.name)
    return AzureCosmosStore(container, spec)


def provision(endpoint: str, key: str, database: str, spec: ContainerSpec, *,
              connection_verify: bool = True) -> list[str]:
    """Create database and container (partition key, indexing policy, TTL) idempotently."""
    cosmos = client(endpoint, key, profile="relay", connection_verify=connection_verify,
                    enable_endpoint_discovery=not _local(endpoint))
    done: list[str] = []
    try:
        db = cosmos.create_database(database)
        done.append(f"database {database!r} created")
    except cx.CosmosResourceExistsError:
        db = cosmos.get_database_client(database)
        done.append(f"database {database!r} exists")
    kwargs: dict[str, Any] = {"partition_key": PartitionKey(path=spec.partition_key_path)}
    if spec.indexing_policy:
        kwargs["indexing_policy"] = dict(spec.indexing_policy)
    if spec.default_ttl is not None:
        kwargs["default_ttl"] = spec.default_ttl
    try:
        db.create_container(spec.name, **kwargs)
        done.append(f"container {spec.name!r} created")
    except cx.CosmosResourceExistsError:
        container = db.get_container_client(spec.name)
        current = container.read()
        changes: dict[str, Any] = {}
        if spec.indexing_policy and _policy_differs(current.get("indexingPolicy", {}),
                                                   spec.indexing_policy):
            changes["indexing_policy"] = dict(spec.indexing_policy)
        if current.get("defaultTtl") != spec.default_ttl:
            changes["default_ttl"] = spec.default_ttl
        if changes:
            db.replace_container(container, partition_key=kwargs["partition_key"], **changes)
            done.append(f"container {spec.name!r} exists, updated {', '.join(sorted(changes))}")
        else:
            done.append(f"container {spec.name!r} exists, unchanged")
    return done


def _policy_differs(current: dict[str, Any], wanted: Any) -> bool:
    keys = ("includedPaths", "excludedPaths", "compositeIndexes")

    def norm(policy: Any) -> str:
        return json.dumps({k: policy.get(k, []) for k in keys}, sort_keys=True)

    return norm(current) != norm(wanted)
