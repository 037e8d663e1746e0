"""How the embedded store writes: a batch's change-feed positions, and checkpoints kept off
the committing caller."""

from __future__ import annotations

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
