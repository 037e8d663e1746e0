"""The product's container spec and the process-wide store handles.

The indexing policy is narrow, as in the design this follows: only metadata and the
``Query*`` paths the views filter and sort on are indexed (cheaper writes on Cosmos). Apps add
their composite indexes to ``COMPOSITE_INDEXES``; ``cosmos_init`` provisions them.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from django.conf import settings

from cosmos_backend.factory import StoreConfig, open_store
from cosmos_backend.leases import LeaseStore
from cosmos_backend.store import ContainerSpec, DocumentStore
from cosmos_backend.uow import UnitOfWork


def _asc(*paths: str) -> list[dict[str, str]]:
    return [{"path": p, "order": "ascending"} for p in paths]


# Composite indexes, one list per query shape (filter paths first, then sort paths, then id).
COMPOSITE_INDEXES: list[list[dict[str, str]]] = [
    _asc("/docType", "/id"),  # audit trail (events by id = sequence), aggregates by type
    # Admissions newest first: ORDER BY startedAt DESC, id DESC reads these backwards (the
    # id tie-break follows the last key's direction, so one ascending index serves both).
    _asc("/docType", "/docContents/startedAt", "/id"),
    _asc("/docContents/startedAt", "/id"),
    _asc("/docType", "/docContents/status", "/id"),  # the active admission / active orders
]


def indexing_policy() -> dict[str, Any]:
    from worklists.projection import schema as view_schema  # the views own their query shapes

    composites = COMPOSITE_INDEXES + view_schema.COMPOSITE_INDEXES
    paths = ["/docType/?", "/docSubType/?"]
    for composite in composites:
        for entry in composite:
            path = entry["path"] + "/?"
            if entry["path"] != "/id" and path not in paths:
                paths.append(path)
    return {
        "indexingMode": "consistent",
        "automatic": True,
        "includedPaths": [{"path": p} for p in paths],
        "excludedPaths": [{"path": "/*"}, {"path": '/"_etag"/?'}],
        "compositeIndexes": composites,
    }


def container_spec() -> ContainerSpec:
    cfg = settings.DOCUMENT_STORE
    return ContainerSpec(name=cfg["container"], default_ttl=-1,
                         indexing_policy=indexing_policy())


def lease_spec() -> ContainerSpec:
    cfg = settings.DOCUMENT_STORE
    return ContainerSpec(name=cfg["lease_container"], default_ttl=None,
                         indexing_policy={"includedPaths": [{"path": "/*"}]},
                         partition_key_path="/partitionKey")


def _config(profile: str = "web") -> StoreConfig:
    cfg = settings.DOCUMENT_STORE
    return StoreConfig(
        backend=cfg["backend"], path=cfg["path"], feed_range_count=cfg["feed_range_count"],
        synchronous=cfg["synchronous"], endpoint=cfg["endpoint"], key=cfg["key"],
        database=cfg["database"], connection_verify=cfg["connection_verify"], profile=profile,
    )


_lock = threading.Lock()
_stores: dict[tuple[Any, ...], DocumentStore] = {}


def _cached(kind: str, profile: str) -> DocumentStore:
    key = (kind, profile, os.getpid(), tuple(sorted(settings.DOCUMENT_STORE.items())))
    store = _stores.get(key)
    if store is None:
        with _lock:
            store = _stores.get(key)
            if store is None:
                spec = container_spec() if kind == "data" else lease_spec()
                store = open_store(_config(profile), spec)
                _stores[key] = store
    return store


def get_store(profile: str = "web") -> DocumentStore:
    """The clinical container (one handle per process and configuration)."""
    return _cached("data", profile)


def get_lease_store(group: str = "relay") -> LeaseStore:
    return LeaseStore(_cached("leases", "relay"), group=group)


def new_uow() -> UnitOfWork:
    return UnitOfWork(get_store())


def reset_handles() -> None:
    """Drop cached handles (tests switch stores between cases)."""
    with _lock:
        for store in _stores.values():
            store.close()
        _stores.clear()
