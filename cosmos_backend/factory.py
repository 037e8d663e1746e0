"""Open the configured store: embedded SQLite by default, Azure Cosmos DB when configured."""

from __future__ import annotations

from dataclasses import dataclass

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.store import ContainerSpec, DocumentStore


@dataclass(frozen=True)
class StoreConfig:
    backend: str = "embedded"  # "embedded" | "azure"
    path: str = "var/store.sqlite3"  # embedded
    feed_range_count: int = 4  # embedded
    synchronous: str = "NORMAL"  # embedded: FULL fsyncs every commit
    endpoint: str = ""  # azure
    key: str = ""
    database: str = "hisadmin"
    connection_verify: bool = True
    profile: str = "web"  # "web" | "relay": retry patience on Azure


def open_store(config: StoreConfig, spec: ContainerSpec) -> DocumentStore:
    if config.backend == "embedded":
        return EmbeddedStore(config.path, spec, feed_range_count=config.feed_range_count,
                             synchronous=config.synchronous)
    if config.backend == "azure":
        # Imported on demand: the SDK takes about 150 ms to import, and embedded processes
        # (the default) never use it.
        from cosmos_backend.azure import connect

        return connect(config.endpoint, config.key, config.database, spec,
                       profile=config.profile, connection_verify=config.connection_verify)
    raise ValueError(f"unknown store backend {config.backend!r}")
