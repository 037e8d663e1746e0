"""Which generation of the views is live: the pointer ``V_Meta/generation``, switched by
rebuilds.

``{active: n, building: m | null, highest: k}``. Projections write every live generation
(active and the one being built), so a rebuild never misses an event committed while it
runs; readers read ``active`` only, so the switch is one etag-guarded write and no worklist
goes offline.

Writers keep the live generations for ``WRITER_CACHE_SECONDS`` (two point reads a second
per process instead of one per projected delivery). A rebuild waits longer than that after
each change of the pointer, in whatever process runs it, so every projection that starts
after the wait sees the change: an event committed after the rebuild read a patient's record
is projected into the generation being built, and nothing writes a retired generation once
it is being dropped.
"""

from __future__ import annotations

import time
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from hisadmin.core.cache import ExpiringCache

META_PK = keys.view("Meta")
GENERATION_ID = "generation"
FIRST = 1
READ_CACHE_SECONDS = 0.5  # readers may see a switch this much later
WRITER_CACHE_SECONDS = 0.5
SETTLE_SECONDS = 1.5 * WRITER_CACHE_SECONDS  # a rebuild's wait after changing the pointer
_active: ExpiringCache[int] = ExpiringCache(READ_CACHE_SECONDS)
_live: ExpiringCache[tuple[int, ...]] = ExpiringCache(WRITER_CACHE_SECONDS)


def _read(store: DocumentStore) -> tuple[dict[str, Any], str | None]:
    """The pointer and its etag (None before the first rebuild wrote it)."""
    doc = store.try_read(META_PK, GENERATION_ID)
    if doc is None:
        return {"active": FIRST, "building": None}, None
    return dict(doc["docContents"]), doc["_etag"]


def _write(store: DocumentStore, contents: dict[str, Any], etag: str | None) -> None:
    doc = wrap(doc_id=GENERATION_ID, pk=META_PK, doc_type="ViewGeneration", contents=contents)
    try:
        if etag is None:
            store.create(doc)
        else:
            store.replace(doc, if_match=etag)
    except (errors.Conflict, errors.PreconditionFailed) as exc:
        raise RuntimeError("another rebuild changed the view generation meanwhile") from exc


def pointer(store: DocumentStore) -> dict[str, Any]:
    """The pointer as stored (not cached)."""
    return _read(store)[0]


def live_generations(store: DocumentStore) -> list[int]:
    """The generations projections write: active, and the one being built (cached for
    ``WRITER_CACHE_SECONDS``; see the module's note on why that is safe)."""
    def load() -> tuple[int, ...]:
        current = pointer(store)
        building = current.get("building")
        return (int(current["active"]),) + (() if building is None else (int(building),))

    return list(_live.get(id(store), load))


def _settle() -> None:
    """After changing the pointer: forget it here, and outwait every other process's copy."""
    _live.forget()
    _active.forget()
    time.sleep(SETTLE_SECONDS)


def active_generation(store: DocumentStore) -> int:
    """The generation readers use (cached briefly: one point read per half second)."""
    return _active.get(id(store), lambda: int(pointer(store)["active"]))


def start_building(store: DocumentStore) -> int:
    current, etag = _read(store)
    if current.get("building") is not None:
        raise RuntimeError(f"generation {current['building']} is already being built")
    new = max(int(current["active"]), int(current.get("highest", 0))) + 1
    _write(store, {**current, "building": new, "highest": new}, etag)
    _settle()
    return new


def switch(store: DocumentStore, new: int) -> int:
    """Make ``new`` the active generation; returns the retired one."""
    current, etag = _read(store)
    if current.get("building") != new:
        raise RuntimeError(f"generation {new} is not the one being built")
    _write(store, {**current, "active": new, "building": None}, etag)
    _settle()
    return int(current["active"])


def abandon(store: DocumentStore, gen: int) -> None:
    current, etag = _read(store)
    if current.get("building") == gen:
        _write(store, {**current, "building": None}, etag)
        _live.forget()
