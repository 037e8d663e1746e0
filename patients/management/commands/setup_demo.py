"""Demo accounts, reference data and (when the store has none) demo patients. Idempotent."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from hisadmin.core.store import get_store
from patients import demo


class Command(BaseCommand):
    help = "Ensure demo users, reference data and a small demo data set exist."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-patients", action="store_true")

    def handle(self, *args: Any, no_patients: bool, **options: Any) -> None:
        for line in demo.setup(get_store(), patients=settings.DEMO_DATA and not no_patients):
            self.stdout.write(f"  {line}")
        self.stdout.write(self.style.SUCCESS("demo ready"))
