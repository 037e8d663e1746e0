"""How far the relay is behind the store, per feed range (events and seconds)."""

from __future__ import annotations

import time
from typing import Any

from cosmos_backend.leases import LeaseStore
from cosmos_backend.store import DocumentStore
from hisadmin.core.cache import ExpiringCache
from hisadmin.core.store import get_lease_store, get_store
from worklists.persistence import deadletters
from worklists.persistence.feed import events_in

SCAN_LIMIT = 500  # lag counts are capped: "500+" is all an operator needs to know
CACHE_SECONDS = 1.0  # pages poll every few seconds; one feed scan per second is plenty
_cache: ExpiringCache[dict[str, Any]] = ExpiringCache(CACHE_SECONDS)


def measure(store: DocumentStore, leases: LeaseStore, now: float | None = None
            ) -> dict[str, Any]:
    now = time.time() if now is None else now
    held = {lease.feed_range: lease for lease in leases.all()}
    ranges = []
    for feed_range in store.feed_ranges():
        lease = held.get(feed_range)
        # One page from the checkpoint: what the relay has yet to send, up to the cap.
        page = store.read_feed(feed_range, continuation=lease.continuation if lease else None,
                               max_items=SCAN_LIMIT)
        events = events_in(page.items)
        oldest = min((now if e.written_at is None else e.written_at for e in events),
                     default=None)
        ranges.append({
            "range": feed_range,
            "owner": lease.owner if lease and lease.expires_at > now else None,
            "checkpointAgo": round(now - lease.updated_at, 1) if lease else None,
            "pending": len(events),
            "capped": len(page.items) >= SCAN_LIMIT,
            "seconds": round(max(0.0, now - oldest), 1) if oldest is not None else 0.0,
        })
    return {
        "pending": sum(r["pending"] for r in ranges),
        "seconds": max((r["seconds"] for r in ranges), default=0.0),
        "ranges": ranges,
    }


def relay_lag() -> dict[str, Any]:
    """Small JSON-able summary for /healthz and the worklist pages (cached for a second)."""
    store = get_store()

    def load() -> dict[str, Any]:
        result = measure(store, get_lease_store())
        result["deadLetters"] = deadletters.count(store)
        return result

    return _cache.get(str(getattr(store, "path", id(store))), load)
