"""Issue an API bearer token for a user; the secret is printed once and stored hashed.

Issuing (and re-issuing, ``--replace``) is recorded as a security event with its actor:
``--by USERNAME`` (an admin), else the system (the operator at the server).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import staff
from accounts.models import ApiToken
from hisadmin.core.cli import add_by_argument


class Command(BaseCommand):
    help = ("Issue an API token: create_api_token <username> --name <system> "
            "[--replace] [--by ADMIN]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="integration", help="which system uses it")
        parser.add_argument("--replace", action="store_true",
                            help="re-issue: revoke the user's active tokens of this name")
        add_by_argument(parser)

    def handle(self, *args: Any, username: str, name: str, replace: bool, by: str | None,
               **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"no user named {username!r}") from exc
        try:
            actor = staff.command_actor(by)
        except staff.StaffError as exc:
            raise CommandError(f"no token issued: {exc}") from exc
        replacing = list(ApiToken.objects.filter(user=user, name=name, revoked=False)) \
            if replace else []
        if replace and not replacing:
            raise CommandError(f"{username} holds no active token named {name!r} to replace")
        _, raw = ApiToken.issue(user, name, actor=actor, replacing=replacing)
        self.stdout.write(raw)
