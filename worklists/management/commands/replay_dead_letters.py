"""Send dead-lettered events through the projections again; release held streams, every
consumer's (the projections' here, the others' through the release they registered)."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.models import SecurityEvent
from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams
from hisadmin.core.actor import Actor
from hisadmin.core.held_streams import HeldStream
from hisadmin.core.store import get_store
from worklists.delivery import deadletters
from worklists.delivery.tasks import enqueue
from worklists.persistence.deadletters import all_letters


def operator() -> Actor:
    """Who ran the command: the host account, as the security events name an operator."""
    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = "unknown"
    return Actor(id="system", username=f"operator {who}"[:150], display_name=f"Operator {who}")


class Command(BaseCommand):
    help = ("Replay dead-lettered projection events (all, or the ids given). A held stream's "
            "letters are projected in this process in sequence order, then the stream is "
            "released: repair the record first (e.g. manage.py repair_order). Streams held "
            "by another consumer (the webhooks' or HL7's fan-out) are released by its own release "
            "(their letters fanned out again in order) when no ids are given, or when an id "
            "names the stream (P_…) or its marker (webhooks.P_…, hl7.P_…).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", help="dead letter ids (default: all)")
        parser.add_argument("--inline", action="store_true",
                            help="project in this process instead of queueing a task")

    def handle(self, *args: Any, ids: list[str], inline: bool, **options: Any) -> None:
        store = get_store("relay")
        letters = [letter for letter in all_letters(store) if not ids or letter.id in ids]
        every = held_streams.all_held(store)
        held = {h.stream: h for h in every if h.consumer == held_streams.PROJECTIONS}
        released, touched = 0, []  # touched: the held streams a release was tried on
        # Held streams first, whole and in order: a letter alone would be parked again.
        for stream in sorted({letter.stream for letter in letters} & set(held)):
            outcome = deadletters.release_stream(store, held[stream])
            released += outcome.startswith("released")
            self.stdout.write(f"{stream}: {outcome}")
            touched.append(stream)
        if not ids:  # a held stream with no letter left: its record rebuilds it
            for stream in sorted(set(held) - {letter.stream for letter in letters}):
                outcome = deadletters.release_stream(store, held[stream])
                released += outcome.startswith("released")
                self.stdout.write(f"{stream}: {outcome}")
                touched.append(stream)
        others = [h for h in every if h.consumer != held_streams.PROJECTIONS and (
            not ids or h.stream in ids or held_streams.marker_id(h.consumer, h.stream) in ids)]
        for marker in others:
            outcome = self.release_other(store, marker)
            released += outcome.startswith("released")
            self.stdout.write(f"{marker.stream} ({marker.consumer}): {outcome}")
            touched.append(f"{marker.stream} ({marker.consumer})")
        rest = [letter for letter in letters if letter.stream not in held]
        for letter in rest:
            outcome = deadletters.replay(store, letter, send=None if inline else enqueue)
            self.stdout.write(f"{letter.id}: {outcome}")
        self.stdout.write(f"{len(letters)} dead letter(s) replayed; {released} held "
                          f"stream(s) released; {len(every) - released} still held")
        # Attributed like a replay from the admin pages: the operator's account on the host.
        SecurityEvent.replay(operator(), "projection and held-stream",
                             [letter.id for letter in letters] + touched,
                             everything=not ids)

    @staticmethod
    def release_other(store: DocumentStore, marker: HeldStream) -> str:
        """Release a stream another consumer holds, through the release it registered."""
        release = held_streams.releaser(marker.consumer)
        if release is None:
            return f"still held (no release registered for {marker.consumer})"
        try:
            return release(store, marker)
        except Exception as exc:  # noqa: BLE001 - one consumer's failure never stops the rest
            return f"still held ({type(exc).__name__})"
