"""The embedded store: one SQLite file with Cosmos DB semantics (the default backend)."""

from __future__ import annotations

from cosmos_backend.embedded.store import EmbeddedStore

__all__ = ["EmbeddedStore"]
