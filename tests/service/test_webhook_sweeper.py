"""Webhook deliveries lost with their worker are re-driven by the delivery sweeper, as ADT
out's are (tests/service/test_hl7_delivery_resilience.py): the store's trackers say what is
owed; a task that never ran is queued again, a live claim is left alone, and what was
delivered is forgotten; /healthz counts what is open per subscription."""

from __future__ import annotations

import time

import pytest

from hisadmin.core import held_streams
from tests.service.test_webhook_drain import Receiver, emit, subscribe
from webhooks.delivery import sweeper
from webhooks.delivery.drain import Deliverer
from webhooks.persistence import subscriptions, trackers

pytestmark = [pytest.mark.service, pytest.mark.django_db,
              pytest.mark.synthetic_events("made-up events: what the sweeper re-drives")]


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def test_a_webhook_lost_with_its_worker_is_re_driven_once_and_forgotten(
        his_store, monkeypatch, client) -> None:
    receiver, clock = Receiver(), Clock()
    queued: list[tuple[str, str, int]] = []

    def queue(sub_id: str, stream: str, seq: int) -> None:  # the re-drive runs at once
        queued.append((sub_id, stream, seq))
        Deliverer(his_store, receiver, clock=clock).run(sub_id, stream, seq, token="sweep")

    monkeypatch.setitem(sweeper._kinds, trackers.SUBSCRIPTION, sweeper.Kind(
        name=trackers.SUBSCRIPTION, targets=subscriptions.all_subscriptions, queue=queue,
        consumer=held_streams.WEBHOOKS))
    monkeypatch.delitem(sweeper._kinds, trackers.HL7_DESTINATION, raising=False)
    sub = subscribe(his_store, "PatientRegistered", "AdmissionStarted")
    emit(his_store, "p1", "PatientRegistered", "AdmissionStarted", "AllergyAdded")
    # the fan-out's delivery tasks were lost (a worker SIGKILLed, Redis restarted empty)
    assert sweeper.Sweeper(his_store, clock=clock).sweep().redriven == 0  # too young yet
    health = client.get("/healthz").json()["deliveries"]
    assert health["webhooks"][sub]["pending"] == 1 and health["ok"]
    clock.now = time.time() + sweeper.GRACE_SECONDS + 1
    assert sweeper.Sweeper(his_store, clock=clock).sweep().redriven == 1
    assert queued == [(sub, "P_p1", 2)] and receiver.seqs() == [1, 2]  # in order, once
    clock.now += 1
    again = sweeper.Sweeper(his_store, clock=clock).sweep()
    assert again.redriven == 0 and again.open == 0
    assert receiver.seqs() == [1, 2]
