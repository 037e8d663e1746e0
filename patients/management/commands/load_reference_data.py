"""Load reference data: the shipped files, or a hospital's own (checked, diffed, applied).

``load_reference_data``: brings the store up to ``patients/reference_data/`` (entries an
admin added are kept). ``load_reference_data PATH... [--dry-run]``: the hospital's files
(``Ward.json``… or ``{"type": …, "entries": […]}``; a directory for its ``*.json``) are the
whole truth for the types they hold: checked as a whole, the difference printed (added,
changed, retired), then applied through the use cases with events and the actor. A code that
is no longer listed is retired, never deleted. A bad file changes nothing and says which
file, line, entry and field is wrong.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.policy import actor_for
from hisadmin.core.store import get_store
from patients import use_cases
from patients.domain.errors import DomainError
from patients.persistence.reference_files import read_paths


class Command(BaseCommand):
    help = ("Load reference data: the shipped files, or the hospital's own files given as "
            "paths (checked, the difference shown, then applied; --dry-run only shows it).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", metavar="PATH",
                            help="reference data files or directories of *.json files")
        parser.add_argument("--dry-run", action="store_true",
                            help="check and show what would change; change nothing")
        parser.add_argument("--actor", default="",
                            help="the user the changes are recorded for (default: system)")

    def handle(self, *args: Any, paths: list[str], dry_run: bool, actor: str,
               **options: Any) -> None:
        who = self._actor(actor)
        if not paths:
            if dry_run:
                raise CommandError("--dry-run needs the files to check: give PATH...")
            self._shipped(who, options["verbosity"])
            return
        try:
            sourced = read_paths(paths)
            plan = use_cases.plan_reference_data(get_store(), sourced, retire=True)
        except DomainError as exc:
            raise CommandError(f"nothing loaded: {exc}") from exc
        self._show(plan)
        if dry_run or plan.empty:
            self.stdout.write("dry run: nothing changed." if dry_run else "nothing to change.")
            return
        done: Counter[str] = Counter()
        total = len(plan.added) + len(plan.changed) + len(plan.retired)
        try:
            for n, (_, _, outcome) in enumerate(use_cases.apply_reference_plan(
                    plan, UnitOfWork(get_store()), actor=who), start=1):
                done[outcome] += 1
                if n % 25 == 0 or n == total:
                    self.stdout.write(f"  applied {n}/{total}")
        except DomainError as exc:  # an edit refused on the way (a bed occupied meanwhile)
            raise CommandError(f"stopped after {sum(done.values())} of {total} changes: "
                               f"{exc}") from exc
        self.stdout.write(self.style.SUCCESS(
            "reference data: " + ", ".join(f"{n} {k}" for k, n in sorted(done.items()))))

    def _actor(self, username: str) -> Actor:
        if not username:
            return SYSTEM_ACTOR
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {username!r} to record the changes for.")
        return actor_for(user)

    def _show(self, plan: use_cases.ReferencePlan) -> None:
        for type_name, entry in plan.added:
            self.stdout.write(f"+ {type_name} {entry['code']}: {entry.get('name', '')}")
        for type_name, entry, fields in plan.changed:
            self.stdout.write(f"~ {type_name} {entry['code']}: {', '.join(fields)}")
        for type_name, code in plan.retired:
            self.stdout.write(f"- {type_name} {code}: retired (kept for the records naming it)")
        self.stdout.write(f"{len(plan.added)} added, {len(plan.changed)} changed, "
                          f"{len(plan.retired)} retired, {plan.unchanged} unchanged")

    def _shipped(self, who: Actor, verbosity: int) -> None:
        outcomes: Counter[str] = Counter()
        loaded = use_cases.load_reference_data(UnitOfWork(get_store()), actor=who)
        try:
            for type_name, code, outcome in loaded:
                outcomes[outcome] += 1
                if outcome != "unchanged" and verbosity > 1:
                    self.stdout.write(f"  {type_name} {code}: {outcome}")
        except DomainError as exc:  # a bad file: nothing was written, say what is wrong
            raise CommandError(f"reference data not loaded: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(
            "reference data: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))))
