"""Relay lag per feed range (events, seconds), lease owners, and dead letters."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from rich.console import Console
from rich.table import Table

from hisadmin.core.store import get_lease_store, get_store
from worklists.delivery import deadletters
from worklists.read import generations
from worklists.read.lag import measure


class Command(BaseCommand):
    help = "Show the change-feed relay's lag, lease owners and dead letters."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, json: bool, **options: Any) -> None:  # noqa: A002
        store = get_store()
        lag = measure(store, get_lease_store())
        letters = deadletters.all_letters(store)
        pointer, _ = generations.pointer(store)
        if json:
            self.stdout.write(_dumps({**lag, "generation": pointer,
                                      "deadLetters": [d["docContents"] for d in letters]}))
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
        console.print(f"views: generation {pointer['active']}"
                      + (f" (building {pointer['building']})" if pointer.get("building") else ""))
        console.print(f"dead letters: {len(letters)}")
        for d in letters[:20]:
            c = d["docContents"]
            console.print(f"  {d['id']} {c.get('eventType')}: {c['reason']} "
                          f"({c['attempts']} attempts, {c['failedAt'][:19]})")


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, default=str)
