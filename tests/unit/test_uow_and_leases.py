"""Unit of work and lease store contracts on a real embedded store (fast)."""

from __future__ import annotations

import pytest

from cosmos_backend import errors
from cosmos_backend.leases import LeaseLost, LeaseStore
from cosmos_backend.outbox import SYSTEM_ACTOR, append_events
from cosmos_backend.uow import MultiPartitionCommit, StaleWrite, UnitOfWork


def d(doc_id: str, pk: str = "P_1", **fields: object) -> dict:
    return {"id": doc_id, "partitionKey": pk, **fields}


def test_it_writes_nothing_without_commit(doc_store) -> None:  # noqa: ANN001
    with UnitOfWork(doc_store) as uow:
        uow.add(d("a"))
    assert doc_store.try_read("P_1", "a") is None


def test_it_returns_the_same_tracked_document_twice(doc_store) -> None:  # noqa: ANN001
    doc_store.create(d("a", v=1))
    uow = UnitOfWork(doc_store)
    assert uow.get("P_1", "a") is uow.get("P_1", "a")


def test_it_guards_updates_with_the_etag_read(doc_store) -> None:  # noqa: ANN001
    doc_store.create(d("a", v=1))
    uow = UnitOfWork(doc_store)
    doc = uow.get("P_1", "a")
    doc_store.replace(d("a", v=2))  # someone else
    doc["v"] = 3
    uow.update(doc)
    with pytest.raises(StaleWrite):
        uow.commit()
    assert doc_store.read("P_1", "a")["v"] == 2


def test_it_refuses_to_commit_two_partitions(doc_store) -> None:  # noqa: ANN001
    uow = UnitOfWork(doc_store)
    uow.add(d("a", pk="P_1"))
    uow.add(d("b", pk="P_2"))
    with pytest.raises(MultiPartitionCommit):
        uow.commit()
    assert doc_store.try_read("P_1", "a") is None


def test_it_lets_one_of_two_appenders_on_a_stream_commit(doc_store) -> None:  # noqa: ANN001
    first, second = UnitOfWork(doc_store), UnitOfWork(doc_store)
    append_events(first, "P_1", [("A", {})], actor=SYSTEM_ACTOR)
    append_events(second, "P_1", [("B", {})], actor=SYSTEM_ACTOR)
    first.commit()
    with pytest.raises(StaleWrite):
        second.commit()
    third = UnitOfWork(doc_store)
    docs = append_events(third, "P_1", [("C", {}), ("D", {})], actor=SYSTEM_ACTOR)
    third.commit()
    assert [x["docContents"]["seq"] for x in docs] == [2, 3]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_it_never_lets_two_owners_hold_a_range(doc_store) -> None:  # noqa: ANN001
    clock = Clock()
    leases = LeaseStore(doc_store, clock=clock)
    leases.ensure(["r1"])
    mine = leases.try_acquire("r1", "a", ttl=10)
    assert mine is not None
    assert leases.try_acquire("r1", "b", ttl=10) is None
    clock.now += 11  # a's lease expired: b takes over
    theirs = leases.try_acquire("r1", "b", ttl=10)
    assert theirs is not None and theirs.owner == "b"
    clock.now -= 5  # even if a still believes its lease is valid, its etag is stale
    with pytest.raises(LeaseLost):
        leases.checkpoint(mine, "42", 42, ttl=10)
    assert leases.get("r1").continuation is None


def test_it_never_moves_a_checkpoint_backwards(doc_store) -> None:  # noqa: ANN001
    leases = LeaseStore(doc_store, clock=Clock())
    leases.ensure(["r1"])
    lease = leases.try_acquire("r1", "a", ttl=10)
    lease = leases.checkpoint(lease, "10", 10, ttl=10)
    with pytest.raises(errors.InvalidRequest):
        leases.checkpoint(lease, "5", 5, ttl=10)
    assert leases.get("r1").position == 10
