"""Send dead-lettered events through the projections again; release held streams."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from hisadmin.core import held_streams
from hisadmin.core.store import get_store
from worklists.delivery import deadletters
from worklists.delivery.tasks import enqueue
from worklists.persistence.deadletters import all_letters


class Command(BaseCommand):
    help = ("Replay dead-lettered projection events (all, or the ids given). A held stream's "
            "letters are projected in this process in sequence order, then the stream is "
            "released: repair the record first (e.g. manage.py repair_order).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", help="dead letter ids (default: all)")
        parser.add_argument("--inline", action="store_true",
                            help="project in this process instead of queueing a task")

    def handle(self, *args: Any, ids: list[str], inline: bool, **options: Any) -> None:
        store = get_store("relay")
        letters = [letter for letter in all_letters(store) if not ids or letter.id in ids]
        held = {h.stream: h for h in held_streams.all_held(store, held_streams.PROJECTIONS)}
        released = 0
        # Held streams first, whole and in order: a letter alone would be parked again.
        for stream in sorted({letter.stream for letter in letters} & set(held)):
            outcome = deadletters.release_stream(store, held[stream])
            released += outcome.startswith("released")
            self.stdout.write(f"{stream}: {outcome}")
        if not ids:  # a held stream with no letter left: its record rebuilds it
            for stream in sorted(set(held) - {letter.stream for letter in letters}):
                outcome = deadletters.release_stream(store, held[stream])
                released += outcome.startswith("released")
                self.stdout.write(f"{stream}: {outcome}")
        rest = [letter for letter in letters if letter.stream not in held]
        for letter in rest:
            outcome = deadletters.replay(store, letter, send=None if inline else enqueue)
            self.stdout.write(f"{letter.id}: {outcome}")
        self.stdout.write(f"{len(letters)} dead letter(s) replayed; {released} held "
                          f"stream(s) released; {len(held) - released} still held")
