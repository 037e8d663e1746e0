"""Create the database, the data container and the lease container, idempotently."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from cosmos_backend.azure import provision
from cosmos_backend.embedded import EmbeddedStore
from hisadmin.core import store as handles


class Command(BaseCommand):
    help = "Provision the document store (database, containers, indexing policy, TTL)."

    def handle(self, *args: Any, **options: Any) -> None:
        cfg = settings.DOCUMENT_STORE
        self.stdout.write(f"backend: {cfg['backend']}")
        for spec in (handles.container_spec(), handles.lease_spec()):
            if cfg["backend"] == "azure":
                lines = provision(cfg["endpoint"], cfg["key"], cfg["database"], spec,
                                  connection_verify=cfg["connection_verify"])
            else:
                store = EmbeddedStore(cfg["path"], spec,
                                      feed_range_count=cfg["feed_range_count"])
                lines = [f"{cfg['path']}: {line}" for line in store.provisioned]
                store.close()
            for line in lines:
                self.stdout.write(f"  {line}")
        self.stdout.write(self.style.SUCCESS("store ready"))
