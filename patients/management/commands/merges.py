"""List merges of duplicate records and where each stands; ``--resume`` runs a merge (or an
undo) that stopped between its steps on to its end (docs/patients.md, "Merging duplicate
records"). Exits non-zero while a merge is still in progress after it ran."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.store import get_store
from patients.domain.merges import IN_PROGRESS, SAGA_STATE_LABELS
from patients.use_cases.merges import ResumeMerge, merges_of, resume_merge


class Command(BaseCommand):
    help = "Show merges of duplicate patient records and their state; resume stopped ones."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--resume", action="store_true",
                            help="run each merge in progress whose last step is older than "
                                 "10 s on to its end")
        parser.add_argument("--all", action="store_true",
                            help="list finished, rolled back and undone merges too")

    def handle(self, *args: Any, resume: bool, all: bool, **options: Any) -> None:  # noqa: A002
        store = get_store("relay")
        sagas = sorted(merges_of(store), key=lambda s: s["startedAt"])
        running = [s for s in sagas if s["state"] in IN_PROGRESS]
        if resume:
            for saga in running:
                state = resume_merge(ResumeMerge(saga["retiredId"], saga["mergeId"]),
                                     UnitOfWork(store), actor=SYSTEM_ACTOR)
                saga["state"] = state
            running = [s for s in running if s["state"] in IN_PROGRESS]
        shown = sagas if all else running
        self.stdout.write(f"{len(sagas)} merge(s); {len(running)} in progress")
        for s in shown:
            label = SAGA_STATE_LABELS.get(s["state"], s["state"])
            self.stdout.write(f"  {s['mergeId']}: {s['retiredMrn']} into {s['survivorMrn']}: "
                              f"{label}, started {s['startedAt']}, last step {s['updatedAt']}")
        if running:
            raise CommandError(f"{len(running)} merge(s) in progress: they finish when the "
                               "relay or a command meets them, or with --resume")
