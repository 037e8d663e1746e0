"""Send dead-lettered events through the projections again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from hisadmin.core.store import get_store
from worklists.delivery import deadletters


class Command(BaseCommand):
    help = "Replay dead-lettered projection events (all, or the ids given)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", help="dead letter ids (default: all)")
        parser.add_argument("--inline", action="store_true",
                            help="project in this process instead of queueing a task")

    def handle(self, *args: Any, ids: list[str], inline: bool, **options: Any) -> None:
        store = get_store("relay")
        letters = [d for d in deadletters.all_letters(store) if not ids or d["id"] in ids]
        for doc in letters:
            outcome = deadletters.replay(store, doc, inline=inline)
            self.stdout.write(f"{doc['id']}: {outcome}")
        self.stdout.write(f"{len(letters)} dead letter(s) replayed")
