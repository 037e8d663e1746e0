"""How far the views are behind the store: the relay per feed range (events not yet sent,
seconds), and end to end (``ms``: how long the oldest page the relay handed over has waited
for its views, as the relay publishes it, hisadmin.core.views_lag)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from cosmos_backend.leases import LeaseStore
from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams, views_lag
from hisadmin.core.cache import ExpiringCache
from hisadmin.core.store import get_lease_store, get_store
from worklists.persistence import deadletters
from worklists.persistence.feed import events_in

SCAN_LIMIT = 500  # lag counts are capped: "500+" is all an operator needs to know
CACHE_SECONDS = 1.0  # pages poll every few seconds; one feed scan per second is plenty
# As /healthz judges it (operations.health): a relay lease unrenewed this long is a dead relay,
# and views this far behind the store have stopped following it.
STOPPED_AFTER = 30.0
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
        result["ms"] = views_lag.lag_ms()  # None: no relay published it lately
        result["boundMs"] = views_lag.bound_ms()
        return result

    return _cache.get(str(getattr(store, "path", id(store))), load)


def _parse_instant(value: str | None) -> float | None:
    try:
        return datetime.fromisoformat(value).timestamp() if value else None
    except ValueError:
        return None


def stopped_since(lag: dict[str, Any], held: list[held_streams.HeldStream],
                  leases: LeaseStore, now: float | None = None) -> float | None:
    """How many seconds ago the views stopped following the store, or None while they
    follow it. Stopped, as /healthz counts it degraded: a stream held after a failure (since
    its first failed event), a relay lease unrenewed for :data:`STOPPED_AFTER` seconds
    (since its last renewal; no lease at all is a relay not started yet, not a stop),
    events waiting longer than that (since the oldest was written), or a page handed to the
    projections and not projected for that long (the end-to-end lag: no worker takes it, and
    sending it again did not help)."""
    now = time.time() if now is None else now
    since: list[float] = []
    for h in held:
        at = _parse_instant(h.occurred_at) or _parse_instant(h.held_at)
        since.append(now - at if at is not None else 0.0)
    for lease in leases.all():
        if now - lease.updated_at >= STOPPED_AFTER:
            since.append(now - lease.updated_at)
    seconds = lag.get("seconds")
    if lag.get("pending") and seconds is not None and seconds >= STOPPED_AFTER:
        since.append(float(seconds))
    unprojected = unprojected_for(lag)
    if unprojected is not None:
        since.append(unprojected)
    return round(max(since)) if since else None


def unprojected_for(lag: dict[str, Any]) -> float | None:
    """Seconds a page handed to the projections has gone unprojected, when it is
    :data:`STOPPED_AFTER` or more (no worker takes it, and sending it again did not help);
    else None."""
    ms = lag.get("ms")
    return ms / 1000 if ms is not None and ms >= STOPPED_AFTER * 1000 else None


def updates_stopped() -> float | None:
    """:func:`stopped_since` for the pages (the lag and the projections' held streams as
    read at most a second ago); None when it cannot be told: "freshness unknown" says so."""
    store = get_store()
    try:
        held = list(held_streams.held_now(store).values())
        return stopped_since(relay_lag(), held, get_lease_store())
    except Exception:  # noqa: BLE001 - a page still shows its rows when this is unknown
        return None
