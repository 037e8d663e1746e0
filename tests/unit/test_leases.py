"""Leases: one owner per range at any moment, takeover after expiry, monotonic checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosmos_backend import errors
from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.leases import Lease, LeaseLost, LeaseStore
from cosmos_backend.store import ContainerSpec

TTL = 10.0


class Clock:
    """A clock the test moves by hand, so expiry needs no sleeping."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def leases(doc_store: EmbeddedStore, clock: Clock) -> LeaseStore:
    store = LeaseStore(doc_store, clock=clock)
    store.ensure(["r1", "r2"])
    return store


def acquire(leases: LeaseStore, owner: str, feed_range: str = "r1") -> Lease:
    lease = leases.try_acquire(feed_range, owner, ttl=TTL)
    assert lease is not None, f"{owner} could not take {feed_range}"
    return lease


def test_it_creates_free_leases_once(leases: LeaseStore) -> None:
    mine = acquire(leases, "a")
    leases.ensure(["r1", "r2", "r3"])  # a second relay starting does not reset r1
    assert leases.get("r1").owner == "a" and leases.get("r1").etag == mine.etag
    assert sorted(lease.feed_range for lease in leases.all()) == ["r1", "r2", "r3"]


def test_it_refuses_a_range_someone_else_holds(leases: LeaseStore) -> None:
    acquire(leases, "a")
    assert leases.try_acquire("r1", "b", ttl=TTL) is None
    assert acquire(leases, "b", "r2").owner == "b"  # other ranges are free


def test_it_hands_a_range_over_after_expiry(leases: LeaseStore, clock: Clock) -> None:
    acquire(leases, "a")
    clock.now += TTL - 0.001
    assert leases.try_acquire("r1", "b", ttl=TTL) is None
    clock.now += 0.002
    assert acquire(leases, "b").owner == "b"


def test_it_renews_only_a_live_lease(leases: LeaseStore, clock: Clock) -> None:
    lease = acquire(leases, "a")
    clock.now += TTL / 2
    lease = leases.renew(lease, ttl=TTL)
    assert lease.expires_at == clock.now + TTL
    clock.now += TTL + 1
    with pytest.raises(LeaseLost):
        leases.renew(lease, ttl=TTL)


def test_it_refuses_the_checkpoint_of_an_owner_that_lost_the_lease(
        leases: LeaseStore, clock: Clock) -> None:
    old = acquire(leases, "a")
    old = leases.checkpoint(old, "5", 5, ttl=TTL)
    clock.now += TTL + 1
    new = acquire(leases, "b")
    clock.now -= TTL  # a's own clock says its lease is fine; its etag is stale all the same
    with pytest.raises(LeaseLost):
        leases.checkpoint(old, "9", 9, ttl=TTL)
    with pytest.raises(LeaseLost):
        leases.renew(old, ttl=TTL)
    assert leases.get("r1").continuation == "5"
    assert new.continuation == "5"  # the new owner resumes where the old one stopped


def test_it_refuses_a_checkpoint_after_expiry(leases: LeaseStore, clock: Clock) -> None:
    lease = acquire(leases, "a")
    clock.now += TTL
    with pytest.raises(LeaseLost):
        leases.checkpoint(lease, "1", 1, ttl=TTL)


def test_it_never_moves_a_checkpoint_backwards(leases: LeaseStore) -> None:
    lease = leases.checkpoint(acquire(leases, "a"), "10", 10, ttl=TTL)
    with pytest.raises(errors.InvalidRequest):
        leases.checkpoint(lease, "5", 5, ttl=TTL)
    lease = leases.checkpoint(lease, "10", 10, ttl=TTL)  # standing still is allowed
    assert (leases.get("r1").position, leases.get("r1").continuation) == (10, "10")


def test_it_frees_a_released_range_at_once(leases: LeaseStore) -> None:
    lease = acquire(leases, "a")
    leases.release(lease)
    assert acquire(leases, "b").owner == "b"
    leases.release(lease)  # releasing a lease taken over is a no-op, not a takeover
    assert leases.get("r1").owner == "b"


def test_it_starts_over_after_a_reset(leases: LeaseStore) -> None:
    leases.checkpoint(acquire(leases, "a"), "7", 7, ttl=TTL)
    leases.reset()
    assert [(x.owner, x.continuation, x.position) for x in leases.all()] == [
        (None, None, 0), (None, None, 0)]


def test_it_keeps_checkpoints_out_of_the_monitored_feed(tmp_path: Path, clock: Clock) -> None:
    data = EmbeddedStore(str(tmp_path / "s.sqlite3"), ContainerSpec(name="data"))
    lease_box = EmbeddedStore(str(tmp_path / "s.sqlite3"), ContainerSpec(name="leases"))
    data.create({"id": "a", "partitionKey": "P_1"})
    leases = LeaseStore(lease_box, clock=clock)
    leases.ensure(data.feed_ranges())
    for feed_range in data.feed_ranges():
        lease = acquire(leases, "a", feed_range)
        leases.checkpoint(lease, "1", 1, ttl=TTL)
    seen = [doc["id"] for r in data.feed_ranges() for doc in data.read_feed(r).items]
    assert seen == ["a"]


# Random interleavings of three relays: at no moment do two of them believe they hold r1.
_step = st.tuples(st.sampled_from("abc"), st.sampled_from(["acquire", "renew", "checkpoint"]),
                  st.floats(min_value=0, max_value=TTL * 1.5))


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(_step, min_size=1, max_size=30))
def test_it_never_lets_two_owners_believe_they_hold_a_range(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, float]]) -> None:
    path = tmp_path_factory.mktemp("leases") / "l.sqlite3"
    clock = Clock()
    leases = LeaseStore(EmbeddedStore(str(path), ContainerSpec(name="leases")), clock=clock)
    leases.ensure(["r1"])
    held: dict[str, Lease] = {}
    position = 0
    for owner, action, advance in steps:
        clock.now += advance
        try:
            if action == "acquire" or owner not in held:
                got = leases.try_acquire("r1", owner, ttl=TTL)
                if got is not None:
                    held[owner] = got
            elif action == "renew":
                held[owner] = leases.renew(held[owner], ttl=TTL)
            else:
                position += 1
                held[owner] = leases.checkpoint(held[owner], str(position), position, ttl=TTL)
        except LeaseLost:
            held.pop(owner)
        believers = [o for o, lease in held.items() if lease.held_by(o, clock.now)]
        assert len(believers) <= 1, (believers, clock.now)
        stored = leases.get("r1")
        assert stored.position <= position
