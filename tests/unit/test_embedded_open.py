"""Opening one new store file from several threads at once."""

from __future__ import annotations

import threading
from pathlib import Path

from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import ContainerSpec

SPEC = ContainerSpec(name="c", indexing_policy={"includedPaths": [{"path": "/a/?"}]})


def test_concurrent_openers_of_a_new_file_all_succeed(tmp_path: Path) -> None:
    """Switching a new file to WAL answered "database is locked" at once (SQLite skips its
    busy handler there) in about one round in twelve before the switch was retried."""
    for round_ in range(40):
        path = str(tmp_path / f"s{round_}.sqlite3")
        barrier = threading.Barrier(4, timeout=30)
        failures: list[str] = []

        def open_it(path: str = path, barrier: threading.Barrier = barrier,
                    failures: list[str] = failures) -> None:
            barrier.wait()
            try:
                EmbeddedStore(path, SPEC).close()
            except Exception as exc:  # noqa: BLE001 - the assertion reports it
                failures.append(repr(exc))

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == [], f"round {round_}: {failures}"
