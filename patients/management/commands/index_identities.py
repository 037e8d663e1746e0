"""Enter every registered patient in the possible-duplicates index.

Registration keeps the index itself (``patients/persistence/identities.py``); this command is
for records it never saw: a store upgraded from before the index, a restore of such records,
or a correction whose move of the entry failed (logged as "identity index not moved").
Without an entry, registering the same person again would not be flagged. It enters them in
the births index too, noting the possible duplicates they make for records staff's list
(``patients/persistence/duplicates.py``). Safe to run again and while clerks work: an entry
already there is left as it is, a pair already noted (or decided) too.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand
from rich.progress import Progress, SpinnerColumn, TextColumn

from hisadmin.core.store import get_store
from patients.persistence import duplicates, identities


class Command(BaseCommand):
    help = ("Enter every registered patient in the possible-duplicates index (after an "
            "upgrade or a restore); patients already in it are left as they are.")

    def handle(self, *args: Any, **options: Any) -> None:
        store = get_store()
        started = time.perf_counter()
        with Progress(SpinnerColumn(), TextColumn("{task.description}: {task.completed}"),
                      transient=False) as bar:
            task = bar.add_task("patients checked", total=None)
            done = identities.backfill(store, lambda n: bar.advance(task, n))
        took = time.perf_counter() - started
        self.stdout.write(f"{done.patients} patients checked, {done.entered} entered in the "
                          f"identity index ({done.patients - done.entered} were in it) in "
                          f"{took:.1f}s")
        patients, pairs = duplicates.backfill(store)
        self.stdout.write(f"{patients} patients in the births index, {pairs} possible "
                          "duplicates newly listed")
