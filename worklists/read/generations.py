"""Which generation of the views is live: a pointer document switched by rebuilds.

``{active: n, building: m | null}``. Projections write every live generation (active and the
one being built), so a rebuild never misses an event committed while it runs; readers read
``active`` only, so the switch is one etag-guarded write and no worklist goes offline.
"""

from __future__ import annotations

import time

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore
from worklists.projection.schema import GENERATION_ID, META_PK

FIRST = 1
READ_CACHE_SECONDS = 0.5  # readers may see a switch this much later; writers never cache
_cache: dict[int, tuple[float, int]] = {}


def pointer(store: DocumentStore) -> tuple[dict, Document | None]:
    doc = store.try_read(META_PK, GENERATION_ID)
    if doc is None:
        return {"active": FIRST, "building": None}, None
    return dict(doc["docContents"]), doc


def live_generations(store: DocumentStore) -> list[int]:
    current, _ = pointer(store)
    gens = [int(current["active"])]
    if current.get("building") is not None:
        gens.append(int(current["building"]))
    return gens


def active_generation(store: DocumentStore) -> int:
    """The generation readers use (cached briefly: one point read per half second)."""
    cached = _cache.get(id(store))
    now = time.monotonic()
    if cached is not None and now - cached[0] < READ_CACHE_SECONDS:
        return cached[1]
    gen = int(pointer(store)[0]["active"])
    _cache[id(store)] = (now, gen)
    return gen


def _write(store: DocumentStore, contents: dict, previous: Document | None) -> None:
    doc = wrap(doc_id=GENERATION_ID, pk=META_PK, doc_type="ViewGeneration", contents=contents)
    try:
        if previous is None:
            store.create(doc)
        else:
            store.replace(doc, if_match=previous["_etag"])
    except (errors.Conflict, errors.PreconditionFailed) as exc:
        raise RuntimeError("another rebuild changed the view generation meanwhile") from exc


def start_building(store: DocumentStore) -> int:
    current, doc = pointer(store)
    if current.get("building") is not None:
        raise RuntimeError(f"generation {current['building']} is already being built")
    new = max(int(current["active"]), int(current.get("highest", 0))) + 1
    _write(store, {**current, "building": new, "highest": new}, doc)
    return new


def switch(store: DocumentStore, new: int) -> int:
    """Make ``new`` the active generation; returns the retired one."""
    current, doc = pointer(store)
    if current.get("building") != new:
        raise RuntimeError(f"generation {new} is not the one being built")
    _write(store, {**current, "active": new, "building": None}, doc)
    _cache.clear()
    return int(current["active"])


def abandon(store: DocumentStore, gen: int) -> None:
    current, doc = pointer(store)
    if current.get("building") == gen:
        _write(store, {**current, "building": None}, doc)
