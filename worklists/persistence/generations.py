"""Which generation of the views is live: the pointer ``V_Meta/generation``, switched by
rebuilds.

``{active: n, building: m | null, highest: k}``. Projections write every live generation
(active and the one being built), so a rebuild never misses an event committed while it
runs; readers read ``active`` only, so the switch is one etag-guarded write and no worklist
goes offline.

Writers keep the live generations for ``WRITER_CACHE_SECONDS``, readers the active one for
``READ_CACHE_SECONDS`` (a few point reads a second per process instead of one per projected
delivery or page). A rebuild outwaits both after each change of the pointer, in whatever
process runs it (``SETTLE_SECONDS``), so every projection that starts after the wait sees
the change:

- after :func:`begin_building`, an event projected by a writer that did not know yet may be
  missing from the new generation's rows of a patient built before the wait was over; the
  rebuild builds meanwhile, and then checks those patients again
  (:func:`worklists.ops.maintenance.rebuild`);
- after :func:`switch`, it waits in full before dropping the retired generation, so no
  reader reads it and no writer writes it once it is being dropped.
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
READ_CACHE_SECONDS = 0.25  # readers may see a switch this much later
WRITER_CACHE_SECONDS = 0.25
# A rebuild's wait after changing the pointer: both caches, and a projection in flight.
SETTLE_SECONDS = 1.5 * max(READ_CACHE_SECONDS, WRITER_CACHE_SECONDS)
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


def _settle(wait: bool = True) -> float:
    """After changing the pointer: forget it here, and outwait every other process's copy
    (or, ``wait=False``, return when that is over, for :func:`outwait`)."""
    _live.forget()
    _active.forget()
    settled_at = time.monotonic() + SETTLE_SECONDS
    if wait:
        outwait(settled_at)
    return settled_at


def outwait(settled_at: float) -> None:
    """Sleep until ``settled_at`` (``time.monotonic``), if it is still ahead."""
    time.sleep(max(0.0, settled_at - time.monotonic()))


def active_generation(store: DocumentStore) -> int:
    """The generation readers use (cached briefly: one point read per half second)."""
    return _active.get(id(store), lambda: int(pointer(store)["active"]))


def begin_building(store: DocumentStore) -> tuple[int, float, int]:
    """Mark a new generation as being built, without waiting: returns it, the moment
    (``time.monotonic``, see :func:`outwait`) from which every writer writes it too, and
    the active generation. Until then a writer may project an event into the active
    generation only: whoever builds meanwhile checks the patients it built before that
    moment again."""
    current, etag = _read(store)
    if current.get("building") is not None:
        raise RuntimeError(f"generation {current['building']} is already being built")
    new = max(int(current["active"]), int(current.get("highest", 0))) + 1
    _write(store, {**current, "building": new, "highest": new}, etag)
    return new, _settle(wait=False), int(current["active"])


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
