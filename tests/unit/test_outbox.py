"""Outbox: events written in the entity's batch, numbered per stream, guarded by its etag."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.outbox import (
    STREAM_ID,
    append_events,
    event_id,
    is_event,
    stream_seq,
)
from cosmos_backend.store import Cond, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork

pytestmark = pytest.mark.synthetic_events("made-up events: the outbox's numbering and batches")

NURSE = {"id": "u7", "username": "nurse", "display_name": "Nurse N", "roles": ["nurse"]}
SYSTEM_ACTOR = {"id": "system", "username": "system", "display_name": "System", "roles": []}


def append(store: EmbeddedStore, *types: str, pk: str = "P_1") -> list[dict]:
    uow = UnitOfWork(store)
    docs = append_events(uow, pk, [(t, {"t": t}) for t in types], actor=SYSTEM_ACTOR)
    uow.commit()
    return docs


def events(store: EmbeddedStore, pk: str = "P_1") -> list[dict]:
    return store.query_all(pk, Query(where=(Cond("docType", "=", "Event"),)))


def test_it_numbers_events_from_one_per_stream(doc_store: EmbeddedStore) -> None:
    append(doc_store, "A", "B")
    append(doc_store, "C")
    append(doc_store, "X", pk="P_2")
    assert [e["docContents"]["seq"] for e in events(doc_store)] == [1, 2, 3]
    assert [e["id"] for e in events(doc_store)] == [event_id(1), event_id(2), event_id(3)]
    assert [e["docContents"]["seq"] for e in events(doc_store, "P_2")] == [1]
    assert doc_store.read("P_1", STREAM_ID)["docContents"]["seq"] == 3


def test_it_sorts_event_ids_in_sequence_order() -> None:
    # Ids order the audit trail in queries sorted by id, so they must sort numerically.
    assert sorted([event_id(10), event_id(9), event_id(100)]) == [
        event_id(9), event_id(10), event_id(100)]


def test_it_gives_every_event_a_unique_event_id(doc_store: EmbeddedStore) -> None:
    append(doc_store, *"ABCDE")
    ids = {e["docContents"]["eventId"] for e in events(doc_store)}
    assert len(ids) == 5


def test_it_records_who_when_and_why(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    when = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    [doc] = append_events(uow, "P_1", [("AllergyAdded", {"code": "PEN"})], actor=NURSE,
                          now=when, correlation_id="req-1")
    uow.commit()
    stored = doc_store.read("P_1", doc["id"])["docContents"]
    assert stored["actor"]["username"] == "nurse" and stored["actor"]["roles"] == ["nurse"]
    assert stored["occurredAt"] == when.isoformat()
    assert stored["correlationId"] == "req-1"
    assert stored["type"] == "AllergyAdded" and stored["data"] == {"code": "PEN"}
    assert is_event(doc_store.read("P_1", doc["id"]))
    assert not is_event(doc_store.read("P_1", STREAM_ID))


def test_it_writes_the_entity_and_its_events_in_one_batch(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    uow.add({"id": "patient", "partitionKey": "P_1", "docType": "Patient"})
    append_events(uow, "P_1", [("PatientCreated", {})], actor=SYSTEM_ACTOR)
    assert events(doc_store) == []  # the outbox is part of the commit, not written before
    written = uow.commit()
    assert {d["id"] for d in written} == {"patient", STREAM_ID, event_id(1)}


def test_it_leaves_the_stream_alone_when_there_are_no_events(doc_store: EmbeddedStore) -> None:
    uow = UnitOfWork(doc_store)
    assert append_events(uow, "P_1", [], actor=SYSTEM_ACTOR) == []
    assert uow.pending() == []
    assert stream_seq(uow, "P_1") == 0


def test_it_lets_exactly_one_of_two_interleaved_appenders_commit(
        doc_store: EmbeddedStore) -> None:
    append(doc_store, "Created")
    first, second = UnitOfWork(doc_store), UnitOfWork(doc_store)
    append_events(first, "P_1", [("A", {})], actor=SYSTEM_ACTOR)
    append_events(second, "P_1", [("B", {})], actor=SYSTEM_ACTOR)
    first.commit()
    try:
        second.commit()
        raise AssertionError("both appenders committed")
    except StaleWrite:
        pass
    assert [e["docContents"]["type"] for e in events(doc_store)] == ["Created", "A"]


def test_it_lets_exactly_one_of_two_new_streams_commit(doc_store: EmbeddedStore) -> None:
    # No stream document yet: both create it, so the loser fails on the create (409).
    first, second = UnitOfWork(doc_store), UnitOfWork(doc_store)
    append_events(first, "P_1", [("A", {})], actor=SYSTEM_ACTOR)
    append_events(second, "P_1", [("B", {})], actor=SYSTEM_ACTOR)
    first.commit()
    try:
        second.commit()
        raise AssertionError("both appenders committed")
    except StaleWrite:
        pass
    retry = UnitOfWork(doc_store)
    [doc] = append_events(retry, "P_1", [("B", {})], actor=SYSTEM_ACTOR)
    retry.commit()
    assert doc["docContents"]["seq"] == 2


def test_it_lets_one_of_many_concurrent_threads_append(doc_store: EmbeddedStore) -> None:
    append(doc_store, "Created")
    threads, outcomes = 6, []
    barrier = threading.Barrier(threads)
    lock = threading.Lock()

    def command(n: int) -> None:
        uow = UnitOfWork(doc_store)
        append_events(uow, "P_1", [(f"T{n}", {})], actor=SYSTEM_ACTOR)
        barrier.wait()  # everyone has read seq 1 before anyone commits
        try:
            uow.commit()
            result = "ok"
        except StaleWrite:
            result = "stale"
        with lock:
            outcomes.append(result)

    workers = [threading.Thread(target=command, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(outcomes) == ["ok"] + ["stale"] * (threads - 1)
    assert [e["docContents"]["seq"] for e in events(doc_store)] == [1, 2]
