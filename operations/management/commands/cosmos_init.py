"""Create the database and its containers (clinical, views, leases), idempotently, and
upgrade an embedded store made with one container: its views move to their own file. A
store made before the views' layouts keeps its views where they are until the next rebuild
(:func:`worklists.ops.maintenance.settle_layout`)."""

from __future__ import annotations

import sqlite3
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from cosmos_backend.azure import provision
from cosmos_backend.embedded import EmbeddedStore
from hisadmin.core import keys
from hisadmin.core import store as handles
from worklists.ops.maintenance import settle_layout


class Command(BaseCommand):
    help = ("Provision the document store (database; clinical, views and lease containers; "
            "indexing policies, TTL). On the embedded store it also moves the views and "
            "leases of a store made before the views had a container of their own.")

    def handle(self, *args: Any, **options: Any) -> None:
        cfg = settings.DOCUMENT_STORE
        self.stdout.write(f"backend: {cfg['backend']}")
        if cfg["backend"] == "azure":
            for spec in (handles.container_spec(), handles.views_spec(), handles.lease_spec()):
                for line in provision(cfg["endpoint"], cfg["key"], cfg["database"], spec,
                                      connection_verify=cfg["connection_verify"]):
                    self.stdout.write(f"  {line}")
        else:
            for line in upgrade_embedded(cfg["path"], cfg["feed_range_count"]):
                self.stdout.write(f"  {line}")
        settled = settle_layout(handles.get_store())
        if settled:
            self.stdout.write(f"  {settled}")
        self.stdout.write(self.style.SUCCESS("store ready"))


def upgrade_embedded(path: str, feed_range_count: int) -> list[str]:
    """Provision the embedded files; move what an older store kept in its one file (view
    partitions, leases) into the views file. Idempotent; nothing clinical moves."""
    views_path = handles.views_path(path)
    clinical = EmbeddedStore(path, handles.container_spec(), feed_range_count=feed_range_count)
    views = EmbeddedStore(views_path, handles.views_spec(), feed_range_count=feed_range_count)
    leases = EmbeddedStore(views_path, handles.lease_spec())
    lines = [f"{path}: {line}" for line in clinical.provisioned]
    lines += [f"{views_path}: {line}" for line in views.provisioned + leases.provisioned]
    try:
        moved = clinical.move_partitions(views, handles.is_view_partition, prefix=keys.VIEW)
        if moved:
            lines.append(f"{moved} view documents moved from {path} to {views_path}")
        moved = 0
        if _has_container(path, handles.lease_spec().name):
            old_leases = EmbeddedStore(path, handles.lease_spec())
            try:
                moved = old_leases.move_partitions(leases, lambda pk: True)
            finally:
                old_leases.close()
        if moved:
            lines.append(f"{moved} leases and checkpoints moved from {path} to {views_path}")
    finally:
        for store in (clinical, views, leases):
            store.close()
    return lines


def _has_container(path: str, name: str) -> bool:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                            (EmbeddedStore.table_name(name),)).fetchone() is not None
    finally:
        conn.close()
