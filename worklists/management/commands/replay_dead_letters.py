"""Send dead-lettered events through the projections again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from hisadmin.core.store import get_store
from worklists.delivery import deadletters
from worklists.delivery.tasks import enqueue
from worklists.persistence.deadletters import all_letters


class Command(BaseCommand):
    help = "Replay dead-lettered projection events (all, or the ids given)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", help="dead letter ids (default: all)")
        parser.add_argument("--inline", action="store_true",
                            help="project in this process instead of queueing a task")

    def handle(self, *args: Any, ids: list[str], inline: bool, **options: Any) -> None:
        store = get_store("relay")
        letters = [letter for letter in all_letters(store) if not ids or letter.id in ids]
        for letter in letters:
            outcome = deadletters.replay(store, letter, send=None if inline else enqueue)
            self.stdout.write(f"{letter.id}: {outcome}")
        self.stdout.write(f"{len(letters)} dead letter(s) replayed")
