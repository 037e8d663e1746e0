"""How far the relay is behind the store, per feed range (events and seconds)."""

from __future__ import annotations

import time
from typing import Any

from hisadmin.store import get_lease_store, get_store

SCAN_LIMIT = 500  # lag counts are capped: "500+" is all an operator needs to know


def relay_lag() -> dict[str, Any]:
    store = get_store()
    now = time.time()
    ranges = []
    leases = {lease.feed_range: lease for lease in get_lease_store().all()}
    for feed_range in store.feed_ranges():
        lease = leases.get(feed_range)
        page = store.read_feed(feed_range, continuation=lease.continuation if lease else None,
                               max_items=SCAN_LIMIT)
        pending = len(page.items)
        oldest = min((d.get("_ts", now) for d in page.items), default=None)
        ranges.append({
            "range": feed_range,
            "owner": lease.owner if lease and lease.expires_at > now else None,
            "pending": pending,
            "capped": pending >= SCAN_LIMIT,
            "seconds": round(now - oldest, 1) if oldest is not None else 0.0,
        })
    return {
        "pending": sum(r["pending"] for r in ranges),
        "seconds": max((r["seconds"] for r in ranges), default=0.0),
        "ranges": ranges,
    }
