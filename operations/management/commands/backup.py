"""Take a consistent online backup of the embedded store and Django's database."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from hisadmin.core.cli import progress_bar
from hisadmin.core.store import views_path
from operations import backups

AZURE = (
    "the Azure backend is backed up by Cosmos DB (continuous backup, point-in-time "
    "restore) and Django's database by its server: see docs/operations.md"
)


def django_database() -> sqlite3.Connection | None:
    """Django's open SQLite connection (None when the database is not SQLite)."""
    connection = connections["default"]
    if connection.vendor != "sqlite":
        return None
    connection.ensure_connection()
    return connection.connection


def store_path() -> Path:
    cfg = settings.DOCUMENT_STORE
    if cfg["backend"] != "embedded":
        raise CommandError(AZURE)
    return Path(cfg["path"])


class Command(BaseCommand):
    help = (
        "Back up the embedded store and Django's database into a new directory, while "
        "the system runs (a consistent snapshot; restore it with `restore PATH`)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a directory that does not exist yet (or is empty)")

    def handle(self, *args: Any, path: str, **options: Any) -> None:
        source = store_path()
        database = django_database()
        with progress_bar() as bar:
            task = bar.add_task("copying the store", total=None)
            try:
                manifest = backups.backup(
                    Path(path),
                    store_path=source,
                    views_path=Path(views_path(str(source))),
                    django_db=database,
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
            except backups.BackupError as exc:
                raise CommandError(str(exc)) from exc
        if database is None:
            self.stderr.write(
                "Django's database is not SQLite and is not in this backup: back "
                "it up with its own tools (docs/operations.md)"
            )
        users = "" if manifest.users is None else f", {manifest.users} users"
        self.stdout.write(
            self.style.SUCCESS(
                f"backup {path}: {manifest.documents} documents{users} as of {manifest.created_at}"
            )
        )
