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

Each generation keeps the partition layout it was built with (``layouts``: generation →
layout, :func:`layout`), so a release that changes where rows live never reads or writes
an older generation in the new places: the next rebuild builds a generation in the new
layout beside the old one and switches to it, online. Layout 1: every view bucket in a
partition of its own. Layout 2 (``LAYOUT``, this release's): the views of one ward share
the ward's partition (:mod:`worklists.persistence.view_rows`), so a command that changes a
ward's lists writes them in one batch. A pointer that names no layout for a generation was
written before layouts, so that generation is of layout 1; a store with no pointer yet is
new (``cosmos_init`` marks a store made before layouts, :func:`mark_layout`).
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
LAYOUT = 2  # what a generation built by this release uses
BEFORE_LAYOUTS = 1  # a generation the pointer names no layout for
READ_CACHE_SECONDS = 0.25  # readers may see a switch this much later
WRITER_CACHE_SECONDS = 0.25
# A rebuild's wait after changing the pointer: both caches, and a projection in flight.
SETTLE_SECONDS = 1.5 * max(READ_CACHE_SECONDS, WRITER_CACHE_SECONDS)
# The pointer as last read, per store: readers' active generation, writers' live ones and
# every generation's layout come from one point read per cache period.
_pointers: ExpiringCache[dict[str, Any]] = ExpiringCache(
    min(READ_CACHE_SECONDS, WRITER_CACHE_SECONDS))


def _read(store: DocumentStore) -> tuple[dict[str, Any], str | None]:
    """The pointer and its etag (None before the first rebuild wrote it)."""
    doc = store.try_read(META_PK, GENERATION_ID)
    if doc is None:
        return {"active": FIRST, "building": None, "layouts": {str(FIRST): LAYOUT}}, None
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


def forget() -> None:
    """Drop this process's copies of the pointer (a test that switches stores: a new
    store object may take an old one's ``id``)."""
    _pointers.forget()


def has_pointer(store: DocumentStore) -> bool:
    """Whether the pointer has been written (by a rebuild, or ``cosmos_init``)."""
    return _read(store)[1] is not None


def _cached(store: DocumentStore) -> dict[str, Any]:
    return _pointers.get(id(store), lambda: pointer(store))


def layout(store: DocumentStore, gen: int) -> int:
    """The partition layout of generation ``gen`` (fixed when it was made; the pointer is
    cached for ``WRITER_CACHE_SECONDS``, as for :func:`live_generations`)."""
    layouts = _cached(store).get("layouts") or {}
    return int(layouts.get(str(gen), BEFORE_LAYOUTS))


def mark_layout(store: DocumentStore, layout_: int) -> bool:
    """Write the pointer of a store that has none yet, naming the first generation's
    layout (``cosmos_init``: ``BEFORE_LAYOUTS`` for a store whose views were made before
    layouts); False when the pointer exists already (nothing changed)."""
    current, etag = _read(store)
    if etag is not None:
        return False
    _write(store, {**current, "layouts": {str(FIRST): layout_}}, None)
    _pointers.forget()
    return True


def live_generations(store: DocumentStore) -> list[int]:
    """The generations projections write: active, and the one being built (cached for
    ``WRITER_CACHE_SECONDS``; see the module's note on why that is safe)."""
    current = _cached(store)
    building = current.get("building")
    return [int(current["active"])] + ([] if building is None else [int(building)])


def _settle(wait: bool = True) -> float:
    """After changing the pointer: forget it here, and outwait every other process's copy
    (or, ``wait=False``, return when that is over, for :func:`outwait`)."""
    _pointers.forget()
    settled_at = time.monotonic() + SETTLE_SECONDS
    if wait:
        outwait(settled_at)
    return settled_at


def outwait(settled_at: float) -> None:
    """Sleep until ``settled_at`` (``time.monotonic``), if it is still ahead."""
    time.sleep(max(0.0, settled_at - time.monotonic()))


def active_generation(store: DocumentStore) -> int:
    """The generation readers use (cached briefly: one point read per half second)."""
    return int(_cached(store)["active"])


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
    layouts = {**(current.get("layouts") or {}), str(new): LAYOUT}  # kept: a drop reads them
    _write(store, {**current, "building": new, "highest": new, "layouts": layouts}, etag)
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
        _pointers.forget()
