"""``/healthz``: is the store answering, the broker reachable, the relay alive and keeping up,
is every patient's stream flowing (none held after a failure, hisadmin.core.held_streams),
and are the deliveries out (webhooks, HL7 destinations) getting through: per receiver the
messages pending, sending, retrying and dead, and the delivery sweeper sweeping. Any failing
check makes the answer 503 with ``"status": "degraded"``; dead or held deliveries fail it,
pending and retrying ones are counted and leave it ok."""

from __future__ import annotations

import time
from typing import Any

import redis
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from hisadmin.core import held_streams, views_lag
from hisadmin.core.store import get_lease_store, get_store
from hl7v2.persistence import store as hl7_store
from webhooks.delivery import sweeper
from webhooks.persistence import deadletters, subscriptions, trackers
from worklists.read.lag import relay_lag, unprojected_for

RELAY_STALE_AFTER = 30.0  # seconds without a lease renewal before the relay counts as dead
SWEEPER_STALE_AFTER = 120.0  # seconds without a delivery sweep (receivers exist) before it counts as dead


def check_store() -> dict[str, Any]:
    """Both containers answer a point read: the clinical one (``ms``) and the views'."""
    timings = {}
    for name, pk in (("ms", "R_Health"), ("views_ms", "V_Meta")):
        start = time.perf_counter()
        try:
            get_store().try_read(pk, "ping")
        except Exception as exc:  # noqa: BLE001 - health reports any failure
            return {"ok": False, "error": type(exc).__name__,
                    "container": "clinical" if name == "ms" else "views"}
        timings[name] = round((time.perf_counter() - start) * 1000, 2)
    return {"ok": True, **timings}


def check_broker() -> dict[str, Any]:
    if not settings.CELERY_BROKER_URL:
        return {"ok": False, "error": "REDIS_URL is not set"}
    try:
        client = redis.Redis.from_url(settings.CELERY_BROKER_URL.replace("redis+socket://", "unix://"),
                                      socket_timeout=1, socket_connect_timeout=1)
        client.ping()
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True}


def check_relay() -> dict[str, Any]:
    try:
        leases = get_lease_store().all()
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__}
    now = time.time()
    owned = [lease for lease in leases if lease.owner and lease.expires_at > now]
    fresh = [lease for lease in leases if now - lease.updated_at < RELAY_STALE_AFTER]
    result: dict[str, Any] = {
        "ok": bool(leases) and len(owned) == len(leases) and len(fresh) == len(leases),
        "ranges": len(leases),
        "owned": len(owned),
        "owners": sorted({lease.owner for lease in owned if lease.owner}),
    }
    try:
        result["lag"] = relay_lag()
    except Exception as exc:  # noqa: BLE001 - lag is informative, never fatal
        result["lag_error"] = type(exc).__name__
    else:
        unprojected = unprojected_for(result["lag"])
        if unprojected is not None:
            # The views have stopped following the record (as the pages' "updates stopped"
            # says): a page handed over that no worker has projected, sent again or not.
            result["ok"] = False
            result["error"] = (f"views {unprojected:.0f} s behind: a page handed to the "
                               "projections is not projected (is a worker running?)")
    # Commands held while the views were behind their bound (hisadmin.core.views_lag), and
    # pages sent again because no worker handled them in time (a worker killed whole).
    result["admission"] = views_lag.admission_counts()
    result["redriven"] = views_lag.redriven_count()
    return result


def check_held() -> dict[str, Any]:
    """``{ok, count, streams}``: the streams held by any consumer (views or webhooks not
    current for those patients until repaired and replayed); not ok while any is."""
    try:
        held = held_streams.all_held(get_store())
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__, "count": None, "streams": []}
    streams = sorted({h.stream for h in held})
    return {"ok": not streams, "count": len(streams), "streams": streams}


def check_deliveries() -> dict[str, Any]:
    """``{ok, hl7: {destination: counts}, webhooks: {subscription: counts}, swept_at}``: per
    receiver its messages pending, sending, retrying and dead (HL7: from the message log;
    webhooks: patients with deliveries open as of the last sweep, and dead letters). Not ok
    with a dead or held message, or the sweeps stopped (none for two minutes while there are
    receivers)."""
    try:
        store = get_store()
        dests = hl7_store.all_destinations(store)
        hl7 = hl7_store.open_counts(store, [d.id for d in dests])
        subs = subscriptions.all_subscriptions(store)
        opened = sweeper.open_counts(store)
        letters = deadletters.all_letters(store, limit=10_000)
        swept_at = sweeper.last_sweep(store)
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__}
    for dest in dests:
        held = opened.get((trackers.HL7_DESTINATION, dest.id), {}).get(sweeper.HELD, 0)
        hl7[dest.id]["held"] = held
    hooks: dict[str, dict[str, int]] = {}
    for sub in subs:
        counts = dict.fromkeys((sweeper.PENDING, sweeper.SENDING, sweeper.RETRYING), 0)
        counts.update(opened.get((trackers.SUBSCRIPTION, sub.id), {}))
        counts["dead"] = sum(1 for letter in letters if letter.subscription_id == sub.id)
        hooks[sub.id] = counts
    failing = sum(c.get("dead", 0) + c.get("held", 0) for c in [*hl7.values(), *hooks.values()])
    stale = bool(dests or subs) and 0 < swept_at < time.time() - SWEEPER_STALE_AFTER
    result: dict[str, Any] = {"ok": not failing and not stale, "hl7": hl7, "webhooks": hooks,
                              "swept_at": swept_at or None}
    if stale:
        result["error"] = "no delivery sweep for two minutes (is a relay running?)"
    return result


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"store": check_store(), "broker": check_broker(), "relay": check_relay(),
              "held_streams": check_held(), "deliveries": check_deliveries()}
    ok = all(c["ok"] for c in checks.values())
    return JsonResponse({"ok": ok, "status": "ok" if ok else "degraded", **checks},
                        status=200 if ok else 503)
