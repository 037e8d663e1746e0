"""How the embedded store writes: a batch's change-feed positions, checkpoints kept off
the committing caller, and a process's writers taking the write lock in turn."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cosmos_backend import errors
from cosmos_backend.embedded import store as embedded
from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import BatchOp, ContainerSpec

SPEC = ContainerSpec(name="writes", default_ttl=-1,
                     indexing_policy={"includedPaths": [{"path": "/docType/?"}]})


def doc(pk: str, doc_id: str, **extra: object) -> dict[str, object]:
    return {"id": doc_id, "partitionKey": pk, "docType": "t", **extra}


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    opened = EmbeddedStore(str(tmp_path / "writes.sqlite3"), SPEC)
    yield opened
    opened.close()


def test_a_batch_takes_consecutive_feed_positions_in_its_order(store: EmbeddedStore) -> None:
    first = store.create(doc("p", "a"))
    written = store.execute_batch("p", [
        BatchOp.create(doc("p", "b")), BatchOp.delete("a"), BatchOp.create(doc("p", "c")),
        BatchOp.upsert(doc("p", "d"))])
    assert [w["_lsn"] for w in written if w is not None] == [
        first["_lsn"] + 1, first["_lsn"] + 2, first["_lsn"] + 3]
    assert store.read("p", "d")["_etag"] == written[-1]["_etag"]


def test_a_failed_batch_gives_its_positions_back(store: EmbeddedStore) -> None:
    before = store.create(doc("p", "a"))
    with pytest.raises(errors.BatchFailed):
        store.execute_batch("p", [BatchOp.create(doc("p", "b")), BatchOp.create(doc("p", "a"))])
    after = store.create(doc("p", "c"))
    assert after["_lsn"] == before["_lsn"] + 1
    with pytest.raises(errors.NotFound):
        store.read("p", "b")


def test_the_feed_lists_a_batch_in_position_order(store: EmbeddedStore) -> None:
    store.execute_batch("p", [BatchOp.create(doc("p", str(i))) for i in range(5)])
    items = [item for rng in store.feed_ranges() for item in store.read_feed(rng).items]
    assert [item["id"] for item in sorted(items, key=lambda d: d["_lsn"])] == list("01234")
    assert len({item["_lsn"] for item in items}) == 5


def test_the_wal_is_checkpointed_in_the_background(store: EmbeddedStore, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's own checkpoint would run inside a commit only after thousands of pages; the
    store's background one copies the WAL into the database file after a few commits."""
    monkeypatch.setattr(embedded, "_CHECKPOINT_EVERY", 5)
    db = tmp_path / "writes.sqlite3"
    size = db.stat().st_size
    for i in range(5):
        store.create(doc("p", f"d{i}", body="x" * 20_000))  # several pages each
    deadline = time.monotonic() + 30
    while db.stat().st_size <= size and time.monotonic() < deadline:
        time.sleep(0.02)  # waiting for the checkpoint thread, not timing it
    assert db.stat().st_size > size
    assert store.read("p", "d4")["body"] == "x" * 20_000


def test_a_grouped_block_commits_once_and_other_connections_see_it_whole(
        store: EmbeddedStore, tmp_path: Path) -> None:
    other = EmbeddedStore(str(tmp_path / "writes.sqlite3"), SPEC)
    before = store.write_transactions
    with store.grouped():
        for i in range(5):
            store.execute_batch(f"p{i}", [BatchOp.create(doc(f"p{i}", "a")),
                                          BatchOp.create(doc(f"p{i}", "b"))])
        with store.grouped():  # nested: a savepoint
            store.create(doc("q", "a"))
        assert other.try_read("p0", "a") is None  # nothing visible before the block ends
    assert store.write_transactions == before + 1
    assert all(other.read(f"p{i}", "b")["id"] == "b" for i in range(5))
    assert other.read("q", "a")["id"] == "a"
    other.close()


def test_an_exception_leaving_a_grouped_block_undoes_it(store: EmbeddedStore) -> None:
    store.create(doc("kept", "a"))
    with pytest.raises(RuntimeError), store.grouped():
        store.create(doc("p", "a"))
        with pytest.raises(RuntimeError), store.grouped():  # a nested block undone alone
            store.create(doc("p", "inner"))
            raise RuntimeError("inner")
        store.create(doc("p", "b"))
        assert store.try_read("p", "inner") is None and store.read("p", "b")["id"] == "b"
        raise RuntimeError("outer")
    assert store.try_read("p", "a") is None and store.try_read("p", "b") is None
    assert store.read("kept", "a")["id"] == "a"
    # The feed positions the undone writes took are handed out again, in order.
    after = store.create(doc("p", "c"))
    assert after["_lsn"] == store.read("kept", "a")["_lsn"] + 1


# ---------------------------------------------------------------- a process's writers wait
def _second_writer(handle: EmbeddedStore, doc_id: str, started: threading.Event,
                   done: threading.Event, failed: list[BaseException]) -> threading.Thread:
    def run() -> None:
        started.wait(10)
        try:
            handle.create(doc("p", doc_id))
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failed.append(exc)
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_writer_waiting_for_the_lock_goes_when_this_process_releases_it(
        store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No polling (its period set to a minute), and SQLite's own busy wait would give up
    after 50 ms: only the commit of the writer before it can wake the waiting one."""
    monkeypatch.setattr(embedded, "_RETRY_S", 60.0)
    monkeypatch.setattr(embedded, "_BUSY_MS", 50)
    other = EmbeddedStore(str(tmp_path / "writes.sqlite3"), SPEC)  # same file, own handle
    holding, done, failed = threading.Event(), threading.Event(), []
    thread = _second_writer(other, "second", holding, done, failed)
    with store.grouped():
        store.create(doc("p", "first"))
        holding.set()
        assert not done.wait(0.3)  # it waits while the write lock is held …
    assert done.wait(10)  # … and goes when it is released
    thread.join()
    assert failed == []
    assert store.read("p", "first")["_lsn"] < store.read("p", "second")["_lsn"]
    other.close()


def test_a_failed_write_lets_the_waiting_writer_go(store: EmbeddedStore,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "_RETRY_S", 60.0)
    monkeypatch.setattr(embedded, "_BUSY_MS", 50)
    holding, done, failed = threading.Event(), threading.Event(), []
    thread = _second_writer(store, "b", holding, done, failed)
    with pytest.raises(RuntimeError), store.grouped():
        store.create(doc("p", "a"))
        holding.set()
        assert not done.wait(0.3)
        raise RuntimeError("the block fails, its write is undone")
    assert done.wait(10)
    thread.join()
    assert failed == [] and store.try_read("p", "a") is None
    assert store.read("p", "b")["id"] == "b"


def test_many_threads_commit_every_batch(store: EmbeddedStore) -> None:
    errors_seen: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for b in range(25):
                store.execute_batch(f"p{n}", [BatchOp.create(doc(f"p{n}", f"{b}-{i}"))
                                              for i in range(3)])
            with pytest.raises(errors.BatchFailed):  # a failing one among them
                store.execute_batch(f"p{n}", [BatchOp.create(doc(f"p{n}", "0-0"))])
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            errors_seen.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors_seen == []
    items = [item for rng in store.feed_ranges() for item in store.read_feed(rng).items]
    assert len(items) == 8 * 25 * 3 and len({item["_lsn"] for item in items}) == len(items)


def test_a_writer_still_waits_for_another_process(store: EmbeddedStore, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit in another process opens no gate here: the waiting writer tries again."""
    monkeypatch.setattr(embedded, "_RETRY_S", 0.01)
    monkeypatch.setattr(embedded, "_BUSY_MS", 50)
    path = str(tmp_path / "writes.sqlite3")
    store.create(doc("p", "warm"))
    outsider = sqlite3.connect(path, isolation_level=None)  # as another process would
    outsider.execute("BEGIN IMMEDIATE")
    holding, done, failed = threading.Event(), threading.Event(), []
    thread = _second_writer(store, "mine", holding, done, failed)
    holding.set()
    assert not done.wait(0.3)
    outsider.execute("COMMIT")
    outsider.close()
    assert done.wait(10)
    thread.join()
    assert failed == []


def test_a_forked_child_has_gates_of_its_own(store: EmbeddedStore, tmp_path: Path) -> None:
    """A child forked while a parent's thread is inside a gate must not wait for it."""
    path = str(tmp_path / "writes.sqlite3")
    store.create(doc("p", "a"))
    with embedded._gate(path)._cond:  # as a parent's thread opening it at the fork
        child = multiprocessing.get_context("fork").Process(target=_child_opens_the_gate,
                                                            args=(path,))
        child.start()
        child.join(20)
    assert child.exitcode == 0


def _child_opens_the_gate(path: str) -> None:
    embedded._gate(path).open()


def test_reads_keep_their_long_busy_wait_after_writes(store: EmbeddedStore) -> None:
    """The gate shortens the connection's busy timeout for ``BEGIN IMMEDIATE`` only: after a
    write, a failed write and a grouped block, reads wait as long as ever."""
    def busy_ms() -> int:
        return int(store._conn().execute("PRAGMA busy_timeout").fetchone()[0])

    store.create(doc("p", "a"))
    assert busy_ms() == embedded._BUSY_MS
    with pytest.raises(errors.BatchFailed):
        store.execute_batch("p", [BatchOp.create(doc("p", "a"))])
    assert busy_ms() == embedded._BUSY_MS
    with store.grouped():
        store.create(doc("p", "b"))
    assert busy_ms() == embedded._BUSY_MS


def test_a_writer_goes_when_another_process_holding_the_lock_is_killed(
        store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL of the process holding the write lock: the OS lets its lock go, no gate of
    this process opens, and the waiting writer's retries find the file free."""
    monkeypatch.setattr(embedded, "_RETRY_S", 0.01)
    monkeypatch.setattr(embedded, "_BUSY_MS", 50)
    path = str(tmp_path / "writes.sqlite3")
    store.create(doc("p", "warm"))
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE')\n"
         "c.execute(\"INSERT INTO store_meta VALUES ('x', 'half-written', '1')\")\n"
         "print('holding', flush=True)\n"
         "time.sleep(60)\n", path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        holding, done, failed = threading.Event(), threading.Event(), []
        thread = _second_writer(store, "after-kill", holding, done, failed)
        holding.set()
        assert not done.wait(0.3)
        os.kill(holder.pid, signal.SIGKILL)
        assert done.wait(10)
        thread.join()
    finally:
        holder.kill()
        holder.wait()
    assert failed == []
    assert store.read("p", "after-kill")["id"] == "after-kill"
    rows = store._conn().execute(
        "SELECT COUNT(*) FROM store_meta WHERE key = 'half-written'").fetchone()[0]
    assert rows == 0  # the killed transaction left nothing
