"""Compare the worklist views with the source records; report drift and held streams (every
consumer's: the projections', the webhooks' and HL7's fan-out), optionally repair drift. Exits
non-zero while anything is drifted or held."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.progress import Progress

from hisadmin.core import held_streams
from hisadmin.core.store import get_store
from patients.domain.merges import IN_PROGRESS
from patients.use_cases.merges import merges_of
from worklists.ops import maintenance


class Command(BaseCommand):
    help = "Check every patient's worklist rows against the patient's record."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repair", action="store_true", help="rewrite drifted rows")

    def handle(self, *args: Any, repair: bool, **options: Any) -> None:
        store = get_store("relay")
        ids = sorted(set(maintenance.patient_ids(store)))
        with Progress(transient=True) as bar:
            task = bar.add_task("checking", total=len(ids))
            report = maintenance.check(store, ids, repair=repair,
                                       progress=lambda n: bar.advance(task, n))
        self.stdout.write(f"{report.patients} patients checked; {len(report.drifted)} drifted; "
                          f"{len(report.behind)} behind the source (events in flight?)")
        for patient_id, problems in sorted(report.drifted.items())[:50]:
            self.stdout.write(f"  {patient_id}: {', '.join(problems)}")
        if repair:
            self.stdout.write(f"repaired {report.repaired} patients")
        # A held stream is not drift --repair can mend: its cause has to be mended first (the
        # record repaired, the store or broker back), then its dead letters replayed
        # (docs/operations.md). Every consumer's: the projections' and the webhooks' fan-out.
        held = held_streams.all_held(store)
        self.stdout.write(f"{len(held)} held stream(s)")
        for h in held:
            self.stdout.write(f"  {h.stream}: held at event {h.seq} ({h.event_type}) for "
                              f"the {h.consumer}, not current since {h.since}: {h.reason}")
        # A merge of two records stopped between its steps shows both (or neither) in the
        # views until it finishes: the relay or a command finishes it, or manage.py merges.
        merging = [m for m in merges_of(store) if m["state"] in IN_PROGRESS]
        self.stdout.write(f"{len(merging)} merge(s) in progress")
        for m in merging:
            self.stdout.write(f"  {m['mergeId']}: {m['retiredMrn']} into {m['survivorMrn']}, "
                              f"{m['state']} since {m['updatedAt']} (manage.py merges --resume)")
        if held:  # the cause first: a held patient's rows are drifted too
            raise CommandError(f"{len(held)} held stream(s): mend the cause (repair the "
                               "record), then manage.py replay_dead_letters")
        if report.drifted and not repair:
            raise CommandError("drift found; run with --repair to rewrite the rows")
