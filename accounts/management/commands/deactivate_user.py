"""Deactivate a staff account (or reactivate it): it can no longer sign in or use the API."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import staff
from hisadmin.core.cli import add_by_argument


class Command(BaseCommand):
    help = (
        "Deactivate a user: no sign-in, sessions ended, API tokens revoked; the account "
        "and its roles stay, as the record names it. --reactivate undoes it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--reactivate", action="store_true", help="let the user in again")
        add_by_argument(parser)

    def handle(
        self, *args: Any, username: str, reactivate: bool, by: str | None, **options: Any
    ) -> None:
        try:
            changed = staff.set_active(username, reactivate, actor=staff.command_actor(by))
        except staff.StaffError as exc:
            raise CommandError(f"nothing changed: {exc}") from exc
        state = "active" if reactivate else "deactivated"
        if changed:
            self.stdout.write(self.style.SUCCESS(f"{username}: {state}"))
        else:
            self.stdout.write(f"{username}: already {state}")
