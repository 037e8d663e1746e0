"""The ordered drain never leaves a patient's pending events without a task on them.

A task that drained past its own event (it held the claim while others queued theirs) and
then failed must come back for the failing one: its retry is the only task left on that
patient's stream. Likewise a task interrupted while holding its claim. And a fan-out that fails for good
holds the patient's stream for the webhooks. Real embedded store,
fake receiver and clock, as in ``test_webhook_drain``."""

from __future__ import annotations

import pytest

from hisadmin.core import held_streams
from tests.service.test_webhook_drain import Clock, Receiver, emit, subscribe
from webhooks.delivery.drain import Deliverer, Settings
from webhooks.delivery.tasks import fan_out
from webhooks.persistence import trackers

pytestmark = [pytest.mark.service, pytest.mark.django_db,
              pytest.mark.synthetic_events("made-up events: the drain's ordering and retries")]
TYPES = ("AdmissionStarted", "OrderReady")


def test_a_holders_retry_delivers_the_later_event_that_failed_under_it(his_store) -> None:
    sub = subscribe(his_store, *TYPES)
    emit(his_store, "w1", "AdmissionStarted", "OrderReady", "OrderReady")
    clock = Clock()
    settings = Settings(backoff_base=1.0, max_attempts=5)
    # Task "a" (event 1) holds the claim; tasks for events 2 and 3 find it taken and leave.
    holder = trackers.save(
        his_store, trackers.Tracker(sub, "w1", claim="a", claim_until=clock.now + 30)
    )
    for seq, token in ((2, "b"), (3, "c")):
        left = Deliverer(his_store, Receiver(), settings, clock=clock).run(
            sub, "P_w1", seq, token=token
        )
        assert left.kind == "queued"
    assert holder.claim == "a"
    # The holder delivers 1, then 2 fails: it backs off and its task comes back later...
    receiver = Receiver(200, 500)
    first = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_w1", 1, token="a")
    assert first.kind == "retry" and receiver.seqs() == [1, 2]
    # ...with its own event (1) long delivered: it still delivers 2 and the queued 3.
    clock.now += first.retry_in or 0
    again = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_w1", 1, token="a")
    assert again.kind == "delivered" and receiver.seqs() == [1, 2, 2, 3]
    tracker = trackers.read(his_store, sub, "w1")
    assert (tracker.delivered, tracker.failing_seq, tracker.claim) == (3, None, None)


def test_a_retry_arriving_before_its_backoff_ends_comes_back_later(his_store) -> None:
    sub = subscribe(his_store, *TYPES)
    emit(his_store, "w2", "AdmissionStarted", "OrderReady")
    clock = Clock()
    settings = Settings(backoff_base=2.0, max_attempts=5)
    receiver = Receiver(200, 500)
    trackers.save(his_store, trackers.Tracker(sub, "w2", wanted=2))
    first = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_w2", 1, token="a")
    assert first.kind == "retry"
    clock.now += 1.0  # the timer fired early: event 2 is still backing off
    early = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_w2", 1, token="a")
    assert early.kind == "later" and early.retry_in == pytest.approx(1.1)
    assert receiver.seqs() == [1, 2]


def test_a_task_interrupted_past_its_own_event_resumes_its_claim(his_store) -> None:
    sub = subscribe(his_store, *TYPES)
    emit(his_store, "w3", "AdmissionStarted", "OrderReady")
    clock = Clock()
    # Task "a" (event 1) delivered 1 and held the claim for 2 when the store failed under it.
    trackers.save(
        his_store,
        trackers.Tracker(sub, "w3", delivered=1, wanted=2, claim="a", claim_until=clock.now + 30),
    )
    receiver = Receiver()
    resumed = Deliverer(his_store, receiver, clock=clock).run(sub, "P_w3", 1, token="a")
    assert resumed.kind == "delivered" and receiver.seqs() == [2]
    # Nothing pending and nobody's claim: a late duplicate is just that.
    late = Deliverer(his_store, receiver, clock=clock).run(sub, "P_w3", 1, token="z")
    assert late.kind == "duplicate" and receiver.seqs() == [2]


def test_a_fan_out_that_fails_for_good_holds_the_stream_for_the_webhooks(his_store) -> None:
    fan_out.on_failure(RuntimeError("store down"), "task-1", ("P_w4", [7, 5, 6]), {}, None)
    marker = held_streams.read(his_store, "P_w4", held_streams.WEBHOOKS)
    assert marker is not None and marker.seq == 5
    assert marker.reason == "fan-out failed: RuntimeError: store down"
    assert held_streams.read(his_store, "P_w4") is None  # the projections' own are apart
