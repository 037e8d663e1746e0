"""The document envelope: metadata around a domain object, as in the design this follows.

``{id, partitionKey, docType, docSubType, schemaVersion, docContents}`` plus optional ``ttl``
and top-level ``Query*`` fields that the indexing policy indexes (everything else is not).
"""

from __future__ import annotations

from typing import Any

from cosmos_backend.store import Document

ENVELOPE_KEYS = ("id", "partitionKey", "docType", "docSubType", "schemaVersion", "docContents")


def wrap(
    *,
    doc_id: str,
    pk: str,
    doc_type: str,
    contents: dict[str, Any],
    sub_type: str | None = None,
    schema_version: int = 1,
    ttl: int | None = None,
    query_fields: dict[str, Any] | None = None,
) -> Document:
    """Build an envelope. ``query_fields`` keys must start with ``Query`` (indexed paths)."""
    doc: Document = {
        "id": doc_id,
        "partitionKey": pk,
        "docType": doc_type,
        "docSubType": sub_type or doc_type,
        "schemaVersion": schema_version,
        "docContents": contents,
    }
    for key, value in (query_fields or {}).items():
        if not key.startswith("Query"):
            raise ValueError(f"query field {key!r} must start with 'Query' to be indexed")
        doc[key] = value
    if ttl is not None:
        doc["ttl"] = ttl
    return doc


def contents(doc: Document) -> dict[str, Any]:
    return doc["docContents"]


def etag(doc: Document) -> str | None:
    return doc.get("_etag")
