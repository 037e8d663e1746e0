"""Reference data in ``R_<Type>`` partitions: one document per entry, id = code."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cosmos_backend import errors, keys
from cosmos_backend.envelope import wrap
from cosmos_backend.store import DocumentStore, Query
from patients.domain.errors import UnknownReference

DATA_DIR = Path(__file__).resolve().parents[1] / "reference_data"
TYPES = ("Department", "Ward", "Medication", "Unit", "Route", "Frequency", "Modality",
         "BodyPart", "LabTest")
_CACHE_SECONDS = 5.0  # admins' edits show within seconds without a read per request
_cache: dict[tuple[int, str], tuple[float, dict[str, dict[str, Any]]]] = {}


def entries_from_files() -> Iterator[tuple[str, dict[str, Any]]]:
    for type_name in TYPES:
        for entry in json.loads((DATA_DIR / f"{type_name}.json").read_text()):
            yield type_name, entry


def load(store: DocumentStore) -> Iterator[tuple[str, str, str]]:
    """Upsert the repo's reference data; yields (type, code, created|updated|unchanged)."""
    for type_name, entry in entries_from_files():
        contents = {"active": True, **entry}
        existing = store.try_read(keys.reference(type_name), entry["code"])
        if existing is not None and existing["docContents"] == contents:
            yield type_name, entry["code"], "unchanged"
            continue
        store.upsert(wrap(doc_id=entry["code"], pk=keys.reference(type_name),
                          doc_type="Reference", sub_type=type_name, contents=contents))
        yield type_name, entry["code"], "created" if existing is None else "updated"
    _cache.clear()


def all_of(store: DocumentStore, type_name: str) -> dict[str, dict[str, Any]]:
    """Every entry of a type by code (cached for a few seconds per process)."""
    key = (id(store), type_name)
    hit = _cache.get(key)
    if hit is not None and time.monotonic() - hit[0] < _CACHE_SECONDS:
        return hit[1]
    docs = store.query_all(keys.reference(type_name), Query())
    entries = {d["id"]: d["docContents"] for d in docs}
    _cache[key] = (time.monotonic(), entries)
    return entries


def get(store: DocumentStore, type_name: str, code: str, *, field: str) -> dict[str, Any]:
    try:
        entry = all_of(store, type_name).get(code)
    except errors.InvalidRequest:
        entry = None
    if entry is None or not entry.get("active", True):
        raise UnknownReference(f"Unknown {type_name.lower()} {code!r}; choose one from the list.",
                               field=field)
    return entry


def choices(store: DocumentStore, type_name: str) -> list[tuple[str, str]]:
    return sorted(((code, e["name"]) for code, e in all_of(store, type_name).items()
                   if e.get("active", True)), key=lambda c: c[1])


def invalidate() -> None:
    _cache.clear()
