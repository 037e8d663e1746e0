"""A relay inside the worker keeps the events it read, and the worker's tasks on them skip
re-reading them; a relay in a process of its own keeps nothing. Real embedded store,
relay and projection; the broker is replaced by a list (what was sent is asserted)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from bench.counting import CountingStore, Meter
from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import recent_events
from hisadmin.core.actor import Actor
from hisadmin.core.cache import ExpiringCache
from hisadmin.core.store import get_lease_store
from patients import use_cases
from worklists.delivery.projector import project_events
from worklists.delivery.relay import Relay, consumer_publisher
from worklists.delivery.tasks import PAGE_TASK
from worklists.persistence import generations
from worklists.read.queries import admitted, run

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk", display_name="Clerk", roles=("clerk",))


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    recent_events.forget()
    yield
    recent_events.forget()


def _admitted_patient(store: DocumentStore, family: str) -> str:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Ana", family, date(1970, 1, 1)), UnitOfWork(store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "x"),
                            UnitOfWork(store), actor=CLERK)
    return pid


def _relay_once(store: DocumentStore, *, keep_events: bool) -> dict[str, list[int]]:
    """One relay pass over the feed: the projection messages it sent, by stream."""
    sent: list[tuple[str, list]] = []
    relay = Relay(store, get_lease_store(), consumer_publisher(
        lambda task, args, **_: sent.append((task, args))), keep_events=keep_events)
    try:
        while relay.step():
            pass
    finally:
        relay.release_all()
    return {stream: seqs for task, args in sent if task == PAGE_TASK for stream, seqs in args[0]}


def _census(store: DocumentStore) -> set[str]:
    return {row["patientId"] for row in run(store, admitted("MED")).rows}


def test_the_tasks_of_a_relay_in_the_worker_read_no_event_again(
        his_store: DocumentStore, his_reference_data: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The generation pointer stays cached through the test however slow the machine is.
    monkeypatch.setattr(generations, "_pointers", ExpiringCache(60))
    meter = Meter()
    counting = CountingStore(his_store, meter)
    trips = {}
    # A warm-up first: a running worker has the live generations cached.
    for family, keep in (("Warm", False), ("Kept", True), ("Read", False)):
        pid = _admitted_patient(his_store, family)
        ((stream, seqs),) = [(s, q) for s, q in _relay_once(his_store, keep_events=keep).items()
                             if s.endswith(pid)]
        assert len(seqs) == 2  # registered and admitted: one message, in order
        meter.reset()
        project_events(counting, stream, seqs)
        trips[family] = meter.snapshot()["round_trips"]
        assert pid in _census(his_store)
    # The same work; the kept events were not read again.
    assert trips["Kept"] == trips["Read"] - 1


def test_kept_events_are_the_stored_ones_and_each_reader_gets_its_own_copy(
        his_store: DocumentStore, his_reference_data: None) -> None:
    pid = _admitted_patient(his_store, "Copy")
    ((stream, seqs),) = [(s, q) for s, q in _relay_once(his_store, keep_events=True).items()
                         if s.endswith(pid)]
    meter = Meter()
    counting = CountingStore(his_store, meter)
    saved = recent_events.reads_saved()
    kept = recent_events.read_events(counting, stream, seqs)
    assert meter.snapshot()["round_trips"] == 0 and recent_events.reads_saved() == saved + 1
    recent_events.forget()
    assert kept == recent_events.read_events(his_store, stream, seqs)  # as stored

    _relay_once(his_store, keep_events=True)  # nothing new on the feed: nothing kept
    assert recent_events.read_events(counting, stream, seqs) == kept and meter.snapshot()["round_trips"] == 1


def test_a_partly_kept_delivery_reads_only_what_is_missing(
        his_store: DocumentStore, his_reference_data: None) -> None:
    pid = _admitted_patient(his_store, "Part")
    ((stream, seqs),) = [(s, q) for s, q in _relay_once(his_store, keep_events=True).items()
                         if s.endswith(pid)]
    first = recent_events.read_events(his_store, stream, seqs)
    first[seqs[0]]["type"] = "changed by one reader"  # a reader's copy is its own
    meter = Meter()
    counting = CountingStore(his_store, meter)
    again = recent_events.read_events(counting, stream, [*seqs, seqs[-1] + 1])  # one more: not written
    assert again[seqs[0]]["type"] != "changed by one reader"
    assert sorted(again) == seqs and meter.snapshot()["round_trips"] == 1


def test_a_relay_of_its_own_keeps_nothing(his_store: DocumentStore,
                                          his_reference_data: None) -> None:
    pid = _admitted_patient(his_store, "Alone")
    ((stream, seqs),) = [(s, q) for s, q in _relay_once(his_store, keep_events=False).items()
                         if s.endswith(pid)]
    saved = recent_events.reads_saved()
    recent_events.read_events(his_store, stream, seqs)
    assert recent_events.reads_saved() == saved
