"""Delete stored Idempotency-Key responses older than IDEMPOTENCY_KEY_HOURS."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from hisadmin.core.idempotency import purge_expired


class Command(BaseCommand):
    help = "Delete stored Idempotency-Key responses older than IDEMPOTENCY_KEY_HOURS (24)."

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = purge_expired()
        self.stdout.write(f"{deleted} idempotency record(s) older than "
                          f"{settings.IDEMPOTENCY_KEY_HOURS} h deleted")
