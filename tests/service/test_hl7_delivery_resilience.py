"""Deliveries that survive a killed worker and keep each patient's order, to an engine on a
real socket validating every message with hl7apy STRICT (tests/hl7_engine.py):

- the delivery sweeper re-drives what the store says is owed and no live task has (a task
  lost with its worker or broker; a claim left by a killed worker, once it lapses), and
  leaves alone what a live task holds;
- after the retry budget (or at once on AR) the patient's stream is held for that
  destination, visible in ``/healthz`` (503, with counts per destination) and released in
  order by replaying the message; other patients' messages go on;
- one patient's message waiting for its ACK does not hold another patient's.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from hisadmin.core import held_streams
from hl7v2.outbound import mllp, tasks, use_cases
from hl7v2.outbound.destinations import control_id
from hl7v2.outbound.transport import Hl7Transport
from hl7v2.persistence import store
from tests.hl7_engine import Engine
from tests.service.test_hl7_outbound import (  # noqa: F401 - the engine fixture
    ADMIN,
    Clock,
    destination,
    engine,
)
from webhooks.delivery import sweeper
from webhooks.delivery.drain import Deliverer, Settings
from webhooks.persistence import trackers

pytestmark = [pytest.mark.service, pytest.mark.django_db]


def budget_settings(budget: float = 60.0) -> Settings:
    return Settings(timeout=0.5, max_attempts=10**9, backoff_base=1.0, retry_budget=budget,
                    hold_when_spent=True)


@pytest.fixture
def inline_hl7(his_store, monkeypatch):
    """The sweeper's HL7 re-drive runs the drain at once (no broker): what it queued is
    recorded and delivered."""
    redriven: list[tuple[str, str, int]] = []
    clock = Clock()

    def queue(dest_id: str, stream: str, seq: int) -> None:
        redriven.append((dest_id, stream, seq))
        Deliverer(his_store, settings=budget_settings(), clock=clock,
                  transport=Hl7Transport()).run(
            dest_id, stream, seq, token=f"sweep-{len(redriven)}")

    kind = sweeper.Kind(name=trackers.HL7_DESTINATION, targets=store.all_destinations,
                        queue=queue, consumer=held_streams.HL7)
    monkeypatch.setitem(sweeper._kinds, trackers.HL7_DESTINATION, kind)
    monkeypatch.delitem(sweeper._kinds, trackers.SUBSCRIPTION, raising=False)
    return redriven, clock


def test_a_delivery_lost_with_its_worker_is_re_driven_by_the_sweeper(
        his_store, his_patient, engine, inline_hl7) -> None:  # noqa: F811
    dest = destination(his_store, engine, "PatientRegistered", "AdmissionStarted")
    patient = his_patient()  # events 1 (A04) and 2 (A01): their tasks never ran (lost)
    stream = f"P_{patient.id}"
    redriven, clock = inline_hl7
    first = sweeper.Sweeper(his_store, clock=clock).sweep()
    assert first.events >= 2 and first.redriven == 0  # young: the normal path's chance
    assert sweeper.open_counts(his_store)[("hl7", dest)] == {"pending": 1}
    clock.now = time.time() + sweeper.GRACE_SECONDS + 1  # the events are older than that
    second = sweeper.Sweeper(his_store, clock=clock).sweep()
    assert second.redriven == 1 and redriven == [(dest, stream, 2)]
    assert engine.triggers() == ["A04", "A01"]  # in order, each validated STRICT
    clock.now += 1
    assert sweeper.Sweeper(his_store, clock=clock).sweep().open == 0  # settled, forgotten
    assert {e.status for e in store.entries(his_store, mrn=patient.mrn)} == {"accepted"}


def test_a_claim_left_by_a_killed_worker_is_re_driven_once_it_lapses(
        his_store, his_patient, engine, inline_hl7) -> None:  # noqa: F811
    dest = destination(his_store, engine, "PatientRegistered")
    patient = his_patient(admit=False)
    _, clock = inline_hl7
    # a worker claimed the patient's deliveries and died (SIGKILL) before sending
    trackers.save(his_store, trackers.Tracker(dest, patient.id, delivered=0, wanted=1,
                                              claim="killed-worker", claim_until=clock.now + 30,
                                              kind=trackers.HL7_DESTINATION))
    clock.now += sweeper.GRACE_SECONDS + 1
    assert sweeper.Sweeper(his_store, clock=clock).sweep().redriven == 0  # the claim is live
    assert sweeper.open_counts(his_store)[("hl7", dest)] == {"sending": 1}
    assert engine.got == []
    clock.now += 30  # the claim lapsed
    assert sweeper.Sweeper(his_store, clock=clock).sweep().redriven == 1
    assert engine.triggers() == ["A04"]


def test_after_the_retry_budget_the_patients_stream_is_held_and_replayed_in_order(
        his_store, his_patient, engine, client, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(tasks, "queue_delivery", lambda *args: queued.append(args))
    queued: list[tuple[str, str, int]] = []
    dest = destination(his_store, engine, "PatientRegistered", "AdmissionStarted")
    held_patient, other = his_patient("Held"), his_patient("Other")
    stream = f"P_{held_patient.id}"
    clock = Clock()

    def run(patient_stream: str, seq: int, token: str):
        return Deliverer(his_store, settings=budget_settings(60), clock=clock,
                         transport=Hl7Transport()).run(dest, patient_stream, seq, token=token)

    engine.answers = ["AE", "AE", "none"]
    assert run(stream, 2, "a").kind == "retry"
    clock.now += 30
    assert run(stream, 2, "a").kind == "retry"
    clock.now += 31  # the budget (60 s) is spent on this failure
    assert run(stream, 2, "a").kind == "held"
    assert engine.triggers() == ["A04", "A04", "A04"]  # never the A01 after it
    assert run(stream, 2, "b").kind == "held"  # a later task: still waiting, nothing sent
    assert len(engine.got) == 3
    dead = store.find_entry(his_store, control_id(dest, stream, 1))
    assert dead.status == "dead" and dead.attempts == 3
    assert store.find_entry(his_store, control_id(dest, stream, 2)) is None  # not skipped
    marker = held_streams.read(his_store, stream, held_streams.HL7_DELIVERY)
    assert marker is not None and marker.seq == 1
    # another patient's messages go on meanwhile
    assert run(f"P_{other.id}", 2, "c").kind == "delivered"
    assert engine.triggers()[-2:] == ["A04", "A01"]
    health = client.get("/healthz").json()
    assert health["status"] == "degraded" and not health["deliveries"]["ok"]
    assert health["deliveries"]["hl7"][dest]["dead"] == 1
    assert stream in health["held_streams"]["streams"]
    # replaying the dead message releases the stream: it and the rest go, in order
    assert tasks.replay_now(his_store, dead.control_id).startswith("released")
    assert queued == [(dest, stream, 1)]
    assert held_streams.read(his_store, stream, held_streams.HL7_DELIVERY) is None
    assert run(stream, 1, queued[0][0]).kind == "delivered"
    assert engine.triggers()[-2:] == ["A04", "A01"]
    assert store.find_entry(his_store, control_id(dest, stream, 2)).status == "accepted"


def test_an_ar_holds_at_once_and_is_not_retried(his_store, his_patient, engine) -> None:  # noqa: F811
    dest = destination(his_store, engine, "PatientRegistered")
    patient = his_patient(admit=False)
    engine.answers = ["AR"]
    outcome = Deliverer(his_store, settings=budget_settings(), transport=Hl7Transport()).run(
        dest, f"P_{patient.id}", 1, token="a")
    assert outcome.kind == "held" and len(engine.got) == 1
    entry = store.find_entry(his_store, control_id(dest, f"P_{patient.id}", 1))
    assert entry.status == "dead" and entry.reason == "ACK AR"


def test_the_hl7_default_budget_is_a_day_and_holds(monkeypatch) -> None:
    monkeypatch.delenv("HL7_RETRY_BUDGET", raising=False)
    hl7 = tasks.settings()
    assert hl7.retry_budget >= 24 * 3600 and hl7.hold_when_spent


def test_one_patient_waiting_for_an_ack_does_not_hold_another(
        his_store, his_patient, engine, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("HL7_ACK_TIMEOUT", "3")
    dest = destination(his_store, engine, "PatientRegistered")
    slow, quick = his_patient("Slow", admit=False), his_patient("Quick", admit=False)
    engine.answers = ["none"]  # the first message (the slow patient's) is never answered
    started = threading.Event()

    def slow_send() -> None:
        started.set()
        Deliverer(his_store, settings=budget_settings(), transport=Hl7Transport()).run(
            dest, f"P_{slow.id}", 1, token="slow")

    waiting = threading.Thread(target=slow_send)
    waiting.start()
    started.wait(2)
    deadline = time.time() + 2
    while not engine.got and time.time() < deadline:
        time.sleep(0.01)
    begun = time.perf_counter()
    outcome = Deliverer(his_store, settings=budget_settings(), transport=Hl7Transport()).run(
        dest, f"P_{quick.id}", 1, token="quick")
    took = time.perf_counter() - begun
    waiting.join(10)
    assert outcome.kind == "delivered" and took < 1.0, took


def test_an_engine_that_returns_is_sent_to_within_a_sweep_not_at_the_next_retry(
        his_store, his_patient, monkeypatch) -> None:
    import socket

    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.1/32")
    monkeypatch.setenv("HL7_ACK_TIMEOUT", "5")  # every answer comes: a late one is no silence
    with socket.socket() as reserved:  # a port nobody listens on: the engine is down
        reserved.bind(("127.0.0.1", 0))
        port = reserved.getsockname()[1]
    dest = use_cases.add_destination(
        use_cases.AddDestination(name="Engine", host="127.0.0.1", port=port,
                                 events=["PatientRegistered"]),
        his_store, actor=ADMIN, now=datetime.now(UTC) - timedelta(minutes=1)).id
    patient = his_patient(admit=False)
    stream = f"P_{patient.id}"
    clock = Clock()
    slow = Settings(timeout=1, max_attempts=10**9, backoff_base=120.0, retry_budget=86400,
                    hold_when_spent=True)
    first = Deliverer(his_store, settings=slow, clock=clock, transport=Hl7Transport()).run(
        dest, stream, 1, token="first")
    assert first.kind == "retry" and first.retry_in > 60  # next slot minutes away
    redriven: list[tuple[str, str, int]] = []

    def queue(dest_id: str, stream_: str, seq: int) -> None:
        redriven.append((dest_id, stream_, seq))
        Deliverer(his_store, settings=slow, clock=clock, transport=Hl7Transport()).run(
            dest_id, stream_, seq, token="woken")

    monkeypatch.setitem(sweeper._kinds, trackers.HL7_DESTINATION, sweeper.Kind(
        name=trackers.HL7_DESTINATION, targets=store.all_destinations, queue=queue,
        consumer=held_streams.HL7, wake=tasks.engine_back))
    monkeypatch.delitem(sweeper._kinds, trackers.SUBSCRIPTION, raising=False)
    mllp._probed.clear()
    clock.now += sweeper.GRACE_SECONDS + 1
    assert sweeper.Sweeper(his_store, clock=clock).sweep().redriven == 0  # still down
    assert redriven == []
    with Engine(port=port) as returned:
        mllp._probed.clear()
        clock.now += 5
        assert sweeper.Sweeper(his_store, clock=clock).sweep().redriven == 1
        assert returned.triggers() == ["A04"] and redriven == [(dest, stream, 1)]
        mllp.close_all()
    assert store.find_entry(his_store, control_id(dest, stream, 1)).status == "accepted"


def test_a_pooled_connection_the_engine_closed_costs_no_attempt(
        his_store, his_patient, monkeypatch) -> None:
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.1/32")
    monkeypatch.setenv("HL7_ACK_TIMEOUT", "5")  # every answer comes: a late one is no silence
    with Engine(hang_up=True) as restarting:  # every connection closed after one answer
        dest = destination(his_store, restarting, "PatientRegistered", "AdmissionStarted")
        patient = his_patient()
        stream = f"P_{patient.id}"
        outcome = Deliverer(his_store, settings=budget_settings(),
                            transport=Hl7Transport()).run(dest, stream, 2, token="a")
        assert outcome.kind == "delivered" and outcome.delivered == 2
        assert restarting.triggers() == ["A04", "A01"]
        mllp.close_all()
    for seq in (1, 2):
        assert store.find_entry(his_store, control_id(dest, stream, seq)).attempts == 1
