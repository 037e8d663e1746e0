"""Load the repo's reference data into the R_ partitions (idempotent, with progress)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.store import get_store
from patients import use_cases
from patients.domain.errors import DomainError


class Command(BaseCommand):
    help = "Load departments, wards, medications, … from patients/reference_data/."

    def handle(self, *args: Any, **options: Any) -> None:
        outcomes: Counter[str] = Counter()
        loaded = use_cases.load_reference_data(UnitOfWork(get_store()), actor=SYSTEM_ACTOR)
        try:
            for type_name, code, outcome in loaded:
                outcomes[outcome] += 1
                if outcome != "unchanged" and options["verbosity"] > 1:
                    self.stdout.write(f"  {type_name} {code}: {outcome}")
        except DomainError as exc:  # a bad file: nothing was written, say what is wrong
            raise CommandError(f"reference data not loaded: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(
            "reference data: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))))
