"""The product's container specs and the process-wide store handles.

Two containers: the clinical record (``clinical``) and the views the projections derive from
its change feed (``views``: worklist rows, trackers, generations, dead letters, held
streams). :func:`get_store` hands out one handle over both, routing each partition to its
container (:class:`cosmos_backend.routed.RoutedStore`): the apps name partitions, never
containers. The embedded store keeps each container in a file of its own, so a command and a
projection never wait for the same write lock; the relays' leases and checkpoints live in
the views' file for the same reason (docs/data-model.md, "The views container").

Each indexing policy is narrow, as in the design this follows: only metadata and the paths
the apps' queries filter and sort on are indexed (cheaper writes on Cosmos). Each app
declares its composite indexes with :func:`register_indexes` in its ``AppConfig.ready``, and
the partitions that belong to the views with :func:`register_view_partitions`;
``cosmos_init`` provisions both containers.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any, Literal

from django.conf import settings

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.factory import StoreConfig, open_store
from cosmos_backend.leases import LeaseStore
from cosmos_backend.routed import RoutedStore
from cosmos_backend.store import ContainerSpec, DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import consistency, views_lag


def ascending(*paths: str) -> list[dict[str, str]]:
    """One composite index: filter paths first, then sort paths, then ``/id``."""
    return [{"path": p, "order": "ascending"} for p in paths]


Container = Literal["clinical", "views"]

# Composite indexes, one list per query shape, as the apps registered them, per container.
_COMPOSITES: dict[str, list[list[dict[str, str]]]] = {"clinical": [], "views": []}
# Partitions that live in the views container: patterns the apps registered (re.match).
_VIEW_PARTITIONS: list[str] = []
_view_match: re.Pattern[str] | None = None


def register_indexes(composites: list[list[dict[str, str]]],
                     container: Container = "clinical") -> None:
    """Add an app's composite indexes to a container's policy (idempotent)."""
    for composite in composites:
        if composite not in _COMPOSITES[container]:
            _COMPOSITES[container].append(composite)


def register_view_partitions(*patterns: str) -> None:
    """Partitions whose key matches one of ``patterns`` (regular expressions matched at the
    start) live in the views container: state derived from the change feed, rebuilt from
    the record (``rebuild_worklists``) if lost. Idempotent."""
    global _view_match
    for pattern in patterns:
        if pattern not in _VIEW_PARTITIONS:
            _VIEW_PARTITIONS.append(pattern)
    _view_match = re.compile("|".join(f"(?:{p})" for p in _VIEW_PARTITIONS))


def is_view_partition(pk: str) -> bool:
    return _view_match is not None and _view_match.match(pk) is not None


# Held streams are the projections' (hisadmin.core.held_streams): registered here, by the leaf.
register_view_partitions(r"V_HeldStreams$")


def indexing_policy(container: Container = "clinical") -> dict[str, Any]:
    composites = list(_COMPOSITES[container])
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
    """The clinical container: the record, its events, reference data, reservations."""
    cfg = settings.DOCUMENT_STORE
    return ContainerSpec(name=cfg["container"], default_ttl=-1,
                         indexing_policy=indexing_policy("clinical"))


def views_spec() -> ContainerSpec:
    """The views container: TTL on (dead letters and held marks expire), the views' indexes."""
    cfg = settings.DOCUMENT_STORE
    return ContainerSpec(name=cfg["views_container"], default_ttl=-1,
                         indexing_policy=indexing_policy("views"))


def views_path(store_path: str) -> str:
    """The embedded views file, beside the store's: ``store.sqlite3`` → ``store-views.sqlite3``
    (one setting, the store's path, names both: they are backed up and restored together)."""
    path = Path(store_path)
    return str(path.with_name(f"{path.stem}-views{path.suffix or '.sqlite3'}"))


def lease_spec() -> ContainerSpec:
    cfg = settings.DOCUMENT_STORE
    return ContainerSpec(name=cfg["lease_container"], default_ttl=None,
                         indexing_policy={"includedPaths": [{"path": "/*"}]},
                         partition_key_path="/partitionKey")


def _config(profile: str = "web", kind: str = "data") -> StoreConfig:
    cfg = settings.DOCUMENT_STORE
    path = cfg["path"] if kind == "data" else views_path(cfg["path"])
    return StoreConfig(
        backend=cfg["backend"], path=path, feed_range_count=cfg["feed_range_count"],
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
                store = _open(kind, profile)
                _stores[key] = store
    return store


def _open(kind: str, profile: str) -> DocumentStore:
    if kind == "data":
        return RoutedStore(open_store(_config(profile), container_spec()),
                           open_store(_config(profile, "views"), views_spec()),
                           is_view_partition)
    return open_store(_config(profile, "views"), lease_spec())  # beside the views


def get_store(profile: str = "web") -> DocumentStore:
    """The clinical and views containers behind one handle (one per process and
    configuration): each partition is read and written in its own container."""
    return _cached("data", profile)


def open_embedded(path: str | Path) -> DocumentStore:
    """A fresh handle on the embedded store whose clinical file is ``path`` (its views file
    beside it): for tools and tests that open a store file of their own."""
    cfg = settings.DOCUMENT_STORE
    clinical = EmbeddedStore(str(path), container_spec(),
                             feed_range_count=cfg["feed_range_count"])
    views = EmbeddedStore(views_path(str(path)), views_spec(),
                          feed_range_count=cfg["feed_range_count"])
    return RoutedStore(clinical, views, is_view_partition)


def open_embedded_leases(path: str | Path, group: str = "relay") -> LeaseStore:
    """The leases of the embedded store whose clinical file is ``path``."""
    return LeaseStore(EmbeddedStore(views_path(str(path)), lease_spec()), group=group)


def get_lease_store(group: str = "relay") -> LeaseStore:
    return LeaseStore(_cached("leases", "relay"), group=group)


def new_uow() -> UnitOfWork:
    """A unit of work on the store, noted for the request's consistency token; its commit
    waits briefly while the views are behind their bound (``views_lag.admit``)."""
    return consistency.track(UnitOfWork(get_store(), before_commit=views_lag.admit))


def reset_handles() -> None:
    """Drop cached handles (tests switch stores between cases)."""
    with _lock:
        for store in _stores.values():
            store.close()
        _stores.clear()
