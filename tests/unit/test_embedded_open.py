"""Opening one new store file from several threads at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cosmos_backend.embedded import store as embedded
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


def test_every_connection_shares_one_memory_budget(tmp_path: Path) -> None:
    """Each thread has a connection with its own page cache; SQLite's soft heap limit bounds
    them together (a web process of 8 threads grew by 23 MB without it)."""
    store = EmbeddedStore(str(tmp_path / "s.sqlite3"), SPEC)
    limits: list[int] = []

    def read_limit() -> None:
        limits.append(store._conn().execute("PRAGMA soft_heap_limit").fetchone()[0])

    threads = [threading.Thread(target=read_limit) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    read_limit()
    store.close()
    assert limits == [embedded._PROCESS_KB * 1024] * 4 and embedded._PROCESS_KB > 0


def test_no_connection_maps_the_file_unless_asked(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A page read through a memory map stays in the reading process's memory (the worker's
    peak grew by 37 MB with the files): by default reads go through the kernel's page cache;
    EMBEDDED_STORE_MMAP_MB asks for a map."""
    store = EmbeddedStore(str(tmp_path / "s.sqlite3"), SPEC)
    assert store._conn().execute("PRAGMA mmap_size").fetchone()[0] == 0
    store.close()
    monkeypatch.setattr(embedded, "_MMAP_MB", 8)
    mapped = EmbeddedStore(str(tmp_path / "m.sqlite3"), SPEC)
    assert mapped._conn().execute("PRAGMA mmap_size").fetchone()[0] == 8 * 1024 * 1024
    mapped.close()
