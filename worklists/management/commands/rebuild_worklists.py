"""Rebuild every worklist view from the source records, aside, then switch generations."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from hisadmin.core.store import get_store
from worklists.ops import maintenance


class Command(BaseCommand):
    help = "Rebuild the worklist views into a new generation and switch to it (no downtime)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--keep-old", action="store_true",
                            help="keep the retired generation's rows (for comparison)")

    def handle(self, *args: Any, keep_old: bool, **options: Any) -> None:
        store = get_store("relay")
        started = time.perf_counter()
        listed_at = time.time()
        ids = sorted(set(maintenance.patient_ids(store)))
        with Progress("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), TimeRemainingColumn(), transient=False) as bar:
            task = bar.add_task("rebuilding", total=len(ids))
            gen, old = maintenance.rebuild(store, ids, lambda n: bar.advance(task, n),
                                           keep_old=keep_old, listed_at=listed_at)
        took = time.perf_counter() - started
        rate = len(ids) / took if took else 0.0
        self.stdout.write(f"generation {gen} is live (was {old}): {len(ids)} patients in "
                          f"{took:.1f}s ({rate:.0f} patients/s)")
