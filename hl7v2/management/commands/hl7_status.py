"""``manage.py hl7_status``: each HL7 destination, its messages by status (pending,
sending, accepted, retrying, dead: every message owed, not only each patient's first) and its
dead letters, then the streams held for HL7 and the fan-out letters (events that reached no
destination, or wait behind one: ``manage.py replay_dead_letters`` releases them in order);
``--replay`` sends every dead letter once more (ids only are printed)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from hisadmin.core import held_streams
from hisadmin.core.store import get_store
from hl7v2.outbound import tasks
from hl7v2.persistence import store


class Command(BaseCommand):
    help = "HL7 destinations, their messages by status and dead letters; --replay retries them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--replay", action="store_true",
                            help="send every dead-lettered message once more, now")

    def handle(self, *args: Any, **options: Any) -> None:
        store_ = get_store("relay")
        counts = store.counts(store_)
        dests = store.all_destinations(store_)
        if not dests:
            self.stdout.write("No HL7 destination.")
        for dest in dests:
            by_status = ", ".join(f"{s} {counts.get((dest.id, s), 0)}" for s in store.STATUSES)
            state = "on" if dest.active else "off"
            self.stdout.write(f"{dest.name} ({dest.id}) {dest.host}:{dest.port} {state}: "
                              f"{by_status}")
        dead = store.entries(store_, status="dead", limit=10_000)
        for entry in dead:
            self.stdout.write(f"  dead {entry.control_id} {entry.trigger} {entry.stream}#"
                              f"{entry.seq} after {entry.attempts} attempt(s): {entry.reason}")
        holds = [*held_streams.all_held(store_, held_streams.HL7),
                 *held_streams.all_held(store_, held_streams.HL7_DELIVERY)]
        for held in holds:
            self.stdout.write(f"  held {held.stream} at event {held.seq} ({held.event_type}) "
                              f"since {held.since}: {held.reason}")
        for letter in tasks.fan_out_letters(store_):
            self.stdout.write(f"  fan-out {letter.stream}#{letter.seq} {letter.event_type} "
                              f"after {letter.attempts} attempt(s): {letter.reason}")
        if options["replay"]:
            for entry in dead:
                self.stdout.write(f"  replay {entry.control_id}: "
                                  f"{tasks.replay_now(store_, entry.control_id)}")
