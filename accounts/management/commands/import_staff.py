"""Create or update staff accounts and their roles from a CSV roster (idempotent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import staff
from hisadmin.core.cli import add_by_argument, progress_bar


class Command(BaseCommand):
    help = (
        "Import staff from a CSV file with the header username,full_name,email,roles "
        "(roles separated by ';'), optionally followed by password (checked by the password "
        "validators): creates, updates and reports unchanged accounts."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the roster, UTF-8 CSV")
        add_by_argument(parser)

    def handle(self, *args: Any, file: str, by: str | None, **options: Any) -> None:
        try:
            text = Path(file).read_text(encoding="utf-8-sig")  # a spreadsheet's BOM is fine
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {file}: {exc}") from exc
        try:
            actor = staff.command_actor(by)
            rows = staff.read_roster(text)
            with progress_bar(counted=True) as bar:
                task = bar.add_task("importing staff", total=len(rows))
                report = staff.import_staff(
                    rows, actor=actor, progress=lambda n: bar.advance(task, n)
                )
        except staff.StaffError as exc:
            raise CommandError(f"{file}: nothing imported: {exc}") from exc
        if options["verbosity"] > 1:
            for outcome in (staff.CREATED, staff.UPDATED):
                for username in getattr(report, outcome):
                    self.stdout.write(f"  {outcome}: {username}")
        self.stdout.write(
            self.style.SUCCESS(
                f"staff: {len(report.created)} created, {len(report.updated)} updated, "
                f"{len(report.unchanged)} unchanged"
            )
        )
