"""Relay lag per feed range (events, seconds), the views' end-to-end lag (ms) against its
bound, the pages handed to the projections and not yet projected, the commands admission
control held, lease owners, and dead letters."""

from __future__ import annotations

import json
import time
from typing import Any

import redis
from django.core.management.base import BaseCommand, CommandParser
from rich.console import Console
from rich.table import Table

from hisadmin.core import views_lag
from hisadmin.core.store import get_lease_store, get_store
from worklists.persistence import generations
from worklists.persistence.deadletters import all_letters
from worklists.read.lag import measure


class Command(BaseCommand):
    help = "Show the change-feed relay's lag, lease owners and dead letters."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, json: bool, **options: Any) -> None:
        store = get_store()
        lag = measure(store, get_lease_store())
        end_to_end = {"ms": views_lag.lag_ms(), "boundMs": views_lag.bound_ms(),
                      "projected": views_lag.projected_positions(),
                      "admission": views_lag.admission_counts(), **_pending()}
        letters = all_letters(store)
        pointer = generations.pointer(store)
        if json:
            self.stdout.write(_dumps({**lag, "endToEnd": end_to_end, "generation": pointer,
                                      "deadLetters": [letter.as_dict() for letter in letters]}))
            return
        table = Table(title="Change-feed relay")
        for col in ("feed range", "owner", "pending events", "lag (s)", "checkpoint age (s)"):
            table.add_column(col)
        for r in lag["ranges"]:
            table.add_row(r["range"], r["owner"] or "[red]none[/red]",
                          f"{r['pending']}{'+' if r['capped'] else ''}", str(r["seconds"]),
                          str(r["checkpointAgo"]))
        console = Console(file=self.stdout, force_terminal=False, width=120)
        console.print(table)
        ms = end_to_end["ms"]
        admission = end_to_end["admission"]
        console.print("views behind the record, end to end: "
                      + ("unknown (no relay published it lately)" if ms is None else f"{ms:g} ms")
                      + f" (bound {end_to_end['boundMs']:g} ms)")
        if end_to_end["pendingPages"] is None:
            console.print("pages handed to the projections: unknown (the broker cannot be "
                          "read from here: is REDIS_URL set as the services have it?)")
        else:
            console.print(f"pages handed to the projections, not yet projected: "
                          f"{end_to_end['pendingPages']}"
                          + (f" (oldest {end_to_end['oldestPendingSeconds']:g} s ago)"
                             if end_to_end["pendingPages"] else "")
                          + (f"; sent again, not handled in time: {end_to_end['redriven']}"
                             if end_to_end["redriven"] else ""))
        if admission:
            console.print(f"commands held for the views: {admission['waits']} "
                          f"({admission['waited_ms']:g} ms in all, {admission['capped']} "
                          "reached the cap)")
        console.print(f"views: generation {pointer['active']}"
                      + (f" (building {pointer['building']})" if pointer.get("building") else ""))
        console.print(f"dead letters: {len(letters)}")
        for letter in letters[:20]:
            console.print(f"  {letter.id} {letter.event_type}: {letter.reason} "
                          f"({letter.attempts} attempts, {letter.failed_at[:19]})")


def _pending() -> dict[str, Any]:
    """How many pages the relays handed over are not projected yet, and the oldest one's
    age (None: the broker cannot be read)."""
    unknown = {"pendingPages": None, "oldestPendingSeconds": None, "redriven": None}
    redriven = views_lag.redriven_count()
    if redriven is None:
        return unknown  # no broker configured here, or it cannot be read
    try:
        pending = views_lag.pending_pages()
    except redis.RedisError:
        return unknown
    oldest = min(pending.values(), default=None)
    return {"pendingPages": len(pending),
            "oldestPendingSeconds": None if oldest is None else round(time.time() - oldest, 1),
            "redriven": redriven}


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, default=str)
