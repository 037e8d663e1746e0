"""Delete the access log's records older than the retention period (docs/security.md).

``prune_access_log --older-than DAYS`` deletes every view and list-view record made more
than DAYS days ago, in one ``DELETE``, and prints how many; run it daily (cron, a systemd
timer). ``--dry-run`` counts without deleting.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from hisadmin.core import access_log
from operations.models import AccessRecord

MINIMUM_DAYS = 1  # a slip of the fingers must not empty the log


class Command(BaseCommand):
    help = "Delete access-log records older than DAYS days: prune_access_log --older-than DAYS"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=int, required=True, metavar="DAYS",
                            help="keep the records of the last DAYS days (at least 1)")
        parser.add_argument("--dry-run", action="store_true", help="count, delete nothing")

    def handle(self, *args: Any, older_than: int, dry_run: bool, **options: Any) -> None:
        if older_than < MINIMUM_DAYS:
            raise CommandError(f"--older-than must be at least {MINIMUM_DAYS} day")
        access_log.flush()  # what this process queued is written before the cut
        before = timezone.now() - timedelta(days=older_than)
        if dry_run:
            count = AccessRecord.objects.filter(at__lt=before).count()
            self.stdout.write(f"{count} access records older than {older_than} days "
                              "would be deleted")
            return
        count = AccessRecord.prune(before)
        self.stdout.write(self.style.SUCCESS(
            f"{count} access records older than {older_than} days deleted"))
