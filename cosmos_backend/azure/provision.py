"""Provision a Cosmos DB database and container from a :class:`ContainerSpec`, idempotently.

Each step reports what it did in one human-readable line; ``manage.py cosmos_init`` prints
them. Re-running changes only what differs from the spec (indexing policy, default TTL); a
different partition key cannot be changed in place and is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from azure.cosmos import CosmosClient, DatabaseProxy, PartitionKey
from azure.cosmos import exceptions as cx

from cosmos_backend import errors
from cosmos_backend.azure.client import build_client, map_error
from cosmos_backend.store import ContainerSpec

_ETAG_PATH = '/"_etag"/?'  # Cosmos adds this exclusion to every policy it stores


def provision(endpoint: str, key: str, database: str, spec: ContainerSpec, *,
              connection_verify: bool = True,
              enable_endpoint_discovery: bool | None = None) -> list[str]:
    """Create ``database`` and the container of ``spec`` if missing, align them otherwise."""
    with build_client(endpoint, key, profile="relay", connection_verify=connection_verify,
                      enable_endpoint_discovery=enable_endpoint_discovery) as client:
        try:
            db, done = ensure_database(client, database)
            return done + ensure_container(db, spec)
        except cx.CosmosHttpResponseError as exc:
            raise map_error(exc) from exc


def ensure_database(client: CosmosClient, name: str) -> tuple[DatabaseProxy, list[str]]:
    try:
        return client.create_database(name), [f"database {name!r} created"]
    except cx.CosmosResourceExistsError:
        return client.get_database_client(name), [f"database {name!r} exists"]


def ensure_container(db: DatabaseProxy, spec: ContainerSpec) -> list[str]:
    partition_key = PartitionKey(path=spec.partition_key_path)
    wanted: dict[str, Any] = {"partition_key": partition_key}
    if spec.indexing_policy:
        wanted["indexing_policy"] = dict(spec.indexing_policy)
    if spec.default_ttl is not None:
        wanted["default_ttl"] = spec.default_ttl
    try:
        db.create_container(spec.name, **wanted)
        return [f"container {spec.name!r} created (partition key {spec.partition_key_path}, "
                f"default TTL {spec.default_ttl}, "
                f"{_index_summary(spec.indexing_policy) if spec.indexing_policy else 'default indexing'})"]
    except cx.CosmosResourceExistsError:
        pass
    container = db.get_container_client(spec.name)
    current = container.read()
    paths = (current.get("partitionKey") or {}).get("paths", [])
    if paths != [spec.partition_key_path]:
        raise errors.InvalidRequest(
            f"container {spec.name!r} is partitioned by {paths}, the spec wants "
            f"{spec.partition_key_path}: that needs a new container and a data migration")
    changes: list[str] = []
    policy = current.get("indexingPolicy") or {}
    if spec.indexing_policy and _normal(policy) != _normal(spec.indexing_policy):
        policy = dict(spec.indexing_policy)
        changes.append("indexing policy updated (Cosmos re-indexes in the background)")
    ttl = current.get("defaultTtl")
    if ttl != spec.default_ttl:
        changes.append(f"default TTL {ttl} -> {spec.default_ttl}")
    if not changes:
        return [f"container {spec.name!r} exists, unchanged"]
    # replace_container resets every property it is not given: send the whole wanted state.
    db.replace_container(container, partition_key=partition_key, indexing_policy=policy,
                         default_ttl=spec.default_ttl,
                         conflict_resolution_policy=current.get("conflictResolutionPolicy"))
    return [f"container {spec.name!r} exists, {'; '.join(changes)}"]


def _normal(policy: Mapping[str, Any]) -> str:
    """A policy in a form where Cosmos's additions and reorderings compare equal."""
    composite = sorted(
        json.dumps([(p["path"], str(p.get("order", "ascending")).lower()) for p in group])
        for group in policy.get("compositeIndexes") or [])
    return json.dumps({
        "mode": str(policy.get("indexingMode", "consistent")).lower(),
        "included": sorted(p["path"] for p in policy.get("includedPaths") or []),
        "excluded": sorted(p["path"] for p in policy.get("excludedPaths") or []
                           if p["path"] != _ETAG_PATH),
        "composite": composite,
    })


def _index_summary(policy: Mapping[str, Any]) -> str:
    return (f"{len(policy.get('includedPaths') or [])} included paths, "
            f"{len(policy.get('compositeIndexes') or [])} composite indexes")
