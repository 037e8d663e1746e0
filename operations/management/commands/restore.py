"""Restore a backup taken by `backup` (services stopped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from hisadmin.core.cli import progress_bar
from hisadmin.core.store import reset_handles, views_path
from operations import backups
from operations.management.commands.backup import django_database, store_path


class Command(BaseCommand):
    help = (
        "Restore the store and Django's database from a backup directory. Stop the web "
        "processes, workers and relay first. Refuses to overwrite a store that holds "
        "documents (or a database with users) unless --force."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a directory written by `backup`")
        parser.add_argument(
            "--force", action="store_true", help="overwrite a store and database that hold data"
        )

    def handle(self, *args: Any, path: str, force: bool, **options: Any) -> None:
        target = store_path()
        reset_handles()  # this process lets go of the store before it is rewritten
        with progress_bar() as bar:
            task = bar.add_task("restoring the store", total=None)
            try:
                manifest = backups.restore(
                    Path(path),
                    store_path=target,
                    views_path=Path(views_path(str(target))),
                    django_db=django_database(),
                    force=force,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
            except backups.BackupError as exc:
                raise CommandError(f"nothing restored: {exc}") from exc
        reset_handles()
        self.stdout.write(
            self.style.SUCCESS(
                f"restored {path} (taken {manifest['createdAt']}): {manifest['documents']} "
                "documents; start the services, then run check_worklists"
            )
        )
