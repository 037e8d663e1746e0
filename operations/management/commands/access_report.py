"""``access_report --patient MRN [--since DATE]``: who viewed a patient's record, as a table.

The same records as the admin page "Who viewed this record" (oldest first here, as a
report reads); ``--json`` gives one object per view. Views of the last second may still be
queued in a server process (``hisadmin.core.access_log``).
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from rich.console import Console
from rich.table import Table

from hisadmin.core.store import get_store
from operations.models import AccessRecord
from patients.persistence import queries

DEFAULT_DAYS = 30


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(
            f"--since {value!r} is not a date: use YYYY-MM-DD, e.g. "
            f"{timezone.localdate().isoformat()}."
        ) from None


class Command(BaseCommand):
    help = (
        "List who viewed a patient's record (by MRN) since a day: when, who, what, how, from where."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--patient", required=True, metavar="MRN", help="The patient's MRN.")
        parser.add_argument(
            "--since",
            metavar="DATE",
            help=f"YYYY-MM-DD, from the start of that day (default: the last {DEFAULT_DAYS} days).",
        )
        parser.add_argument("--json", action="store_true", help="One JSON object per view.")

    def handle(
        self, *args: Any, patient: str, since: str | None, json: bool, **options: Any
    ) -> None:
        mrn = patient.strip()
        if not mrn:
            raise CommandError("--patient needs an MRN, e.g. --patient H0000001.")
        start = (
            timezone.make_aware(datetime.combine(_day(since), time.min))
            if since
            else timezone.now() - timedelta(days=DEFAULT_DAYS)
        )
        found = queries.by_mrn(get_store(), mrn)
        if found is None:
            raise CommandError(f"No patient has MRN {mrn!r}.")
        rows = list(AccessRecord.of_patient(found["patientId"], start).reverse())
        if json:
            for r in rows:
                self.stdout.write(
                    _dumps(
                        {
                            "at": r.at.isoformat(),
                            "username": r.username,
                            "part": r.part,
                            "channel": r.channel,
                            "client": r.client,
                        }
                    )
                )
            return
        table = Table(
            title=f"Views of {mrn}'s record since {start:%Y-%m-%d %H:%M} "
            f"({timezone.get_current_timezone_name()})"
        )
        for col in ("when", "who", "what", "through", "computer"):
            table.add_column(col)
        for r in rows:
            table.add_row(
                timezone.localtime(r.at).strftime("%Y-%m-%d %H:%M:%S"),
                r.username,
                r.part,
                r.channel_label(),
                r.client,
            )
        console = Console(file=self.stdout, force_terminal=False, width=120)
        console.print(table)
        console.print(f"{len(rows)} view{'s' if len(rows) != 1 else ''}")


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data)
