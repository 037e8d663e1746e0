"""Give a staff member exactly the roles named (none: ``--none``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import staff
from hisadmin.core.cli import add_by_argument
from hisadmin.core.roles import ALL_ROLES


class Command(BaseCommand):
    help = (
        f"Set a user's roles, replacing the ones held: set_roles USER ROLE... "
        f"(roles: {', '.join(r.value for r in ALL_ROLES)}; --none takes every role away)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("roles", nargs="*", metavar="ROLE")
        parser.add_argument("--none", action="store_true", help="take every role away")
        add_by_argument(parser)

    def handle(
        self,
        *args: Any,
        username: str,
        roles: list[str],
        none: bool,
        by: str | None,
        **options: Any,
    ) -> None:
        if bool(roles) == none:
            raise CommandError("name the roles to give, or --none to take every role away")
        try:
            actor = staff.command_actor(by)
            wanted = staff.parse_roles(roles)
            before, after = staff.set_roles(username, wanted, actor=actor)
        except staff.StaffError as exc:
            raise CommandError(f"roles not changed: {exc}") from exc
        said = ", ".join(sorted(r.value for r in after)) or "none"
        if before == after:
            self.stdout.write(f"{username}: unchanged ({said})")
        else:
            was = ", ".join(sorted(r.value for r in before)) or "none"
            self.stdout.write(self.style.SUCCESS(f"{username}: roles {was} → {said}"))
