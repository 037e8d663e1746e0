"""Issue an API bearer token for a user; the secret is printed once and stored hashed."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from hisadmin.models import ApiToken


class Command(BaseCommand):
    help = "Issue an API token: create_api_token <username> --name <system>"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="integration", help="which system uses it")

    def handle(self, *args: Any, username: str, name: str, **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"no user named {username!r}") from exc
        _, raw = ApiToken.issue(user, name)
        self.stdout.write(raw)
