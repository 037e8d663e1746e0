"""The product's container spec and the process-wide store handles.

The indexing policy is narrow, as in the design this follows: only metadata and the paths
the apps' queries filter and sort on are indexed (cheaper writes on Cosmos). Each app
declares its composite indexes with :func:`register_indexes` in its ``AppConfig.ready``;
``cosmos_init`` provisions them.
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
from hisadmin.core import consistency


def ascending(*paths: str) -> list[dict[str, str]]:
    """One composite index: filter paths first, then sort paths, then ``/id``."""
    return [{"path": p, "order": "ascending"} for p in paths]


# Composite indexes, one list per query shape, as the apps registered them.
_COMPOSITES: list[list[dict[str, str]]] = []


def register_indexes(composites: list[list[dict[str, str]]]) -> None:
    """Add an app's composite indexes to the container's policy (idempotent)."""
    for composite in composites:
        if composite not in _COMPOSITES:
            _COMPOSITES.append(composite)


def indexing_policy() -> dict[str, Any]:
    composites = list(_COMPOSITES)
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
    """A unit of work on the store, noted for the request's consistency token."""
    return consistency.track(UnitOfWork(get_store()))


def reset_handles() -> None:
    """Drop cached handles (tests switch stores between cases)."""
    with _lock:
        for store in _stores.values():
            store.close()
        _stores.clear()
