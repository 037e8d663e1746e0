"""The ordered drain on a real embedded store, with a fake receiver and a fake clock:
in order per patient, retries with backoff, dead letters, claims, duplicates."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from cosmos_backend.outbox import append_events
from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from webhooks import use_cases
from webhooks.delivery.drain import Deliverer, Settings
from webhooks.delivery.sender import DeliveryFailed
from webhooks.domain import signing
from webhooks.persistence import deadletters, subscriptions, trackers

pytestmark = [pytest.mark.service, pytest.mark.django_db,
              pytest.mark.synthetic_events("made-up events: the drain's ordering and retries")]
ADMIN = Actor(id="1", username="admin", roles=("admin",))
SECRET = "a-secret-of-sufficient-length"


class Receiver:
    """Answers with the queued statuses (then 200) and records what it got."""

    def __init__(self, *statuses: int | Exception) -> None:
        self.statuses = list(statuses)
        self.got: list[tuple[dict, dict[str, str], bytes]] = []

    def __call__(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
        self.got.append((json.loads(body), headers, body))
        status = self.statuses.pop(0) if self.statuses else 200
        if isinstance(status, Exception):
            raise status
        return status

    def seqs(self) -> list[int]:
        return [b["seq"] for b, _, _ in self.got]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def emit(store: DocumentStore, patient: str, *types: str) -> list[int]:
    uow = UnitOfWork(store)
    docs = append_events(
        uow,
        f"P_{patient}",
        [(t, {"n": i}) for i, t in enumerate(types)],
        actor=SYSTEM_ACTOR.as_dict(),
    )
    uow.commit()
    return [d["docContents"]["seq"] for d in docs]


def subscribe(store: DocumentStore, *events: str, when: datetime | None = None) -> str:
    sub, _ = use_cases.subscribe(
        use_cases.Subscribe(url="http://receiver.invalid/hook", events=list(events), secret=SECRET),
        store,
        actor=ADMIN,
        now=when or datetime.now(UTC) - timedelta(minutes=1),
    )
    return sub.id


def test_it_delivers_pending_events_in_order_and_skips_unwanted_ones(his_store) -> None:
    sub = subscribe(his_store, "AdmissionStarted", "OrderReady")
    emit(his_store, "p1", "AdmissionStarted", "AllergyAdded", "OrderReady")
    receiver = Receiver()
    outcome = Deliverer(his_store, receiver).run(sub, "P_p1", 3, token="t1")
    assert outcome.kind == "delivered" and receiver.seqs() == [1, 3]
    body, headers, raw = receiver.got[0]
    assert body["patient_id"] == "p1" and body["type"] == "AdmissionStarted"
    assert signing.verify(raw, SECRET, headers["X-HIS-Signature"])
    assert headers["X-HIS-Delivery"] == signing.delivery_id(sub, "P_p1", 1)
    # The tasks of events 1 and 2 arriving late are duplicates: nothing is sent twice.
    assert Deliverer(his_store, receiver).run(sub, "P_p1", 1, token="t2").kind == "duplicate"
    assert receiver.seqs() == [1, 3]


def test_it_never_sends_what_happened_before_the_subscription(his_store) -> None:
    emit(his_store, "p2", "AdmissionStarted")
    sub = subscribe(his_store, "AdmissionStarted", when=datetime.now(UTC) + timedelta(seconds=1))
    later = datetime.now(UTC) + timedelta(seconds=2)
    uow = UnitOfWork(his_store)
    append_events(uow, "P_p2", [("AdmissionStarted", {})], actor=SYSTEM_ACTOR.as_dict(), now=later)
    uow.commit()
    receiver = Receiver()
    Deliverer(his_store, receiver).run(sub, "P_p2", 2, token="t")
    assert receiver.seqs() == [2]


def test_it_retries_with_backoff_and_holds_the_patients_later_events(his_store) -> None:
    sub = subscribe(his_store, "AdmissionStarted", "OrderReady")
    emit(his_store, "p3", "AdmissionStarted")
    clock, receiver = Clock(), Receiver(500)
    settings = Settings(backoff_base=2.0, max_attempts=5)
    first = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_p3", 1, token="a")
    assert first.kind == "retry" and first.retry_in == pytest.approx(2.1)
    emit(his_store, "p3", "OrderReady")
    # Event 2 waits behind the failing event 1: order per patient.
    held = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_p3", 2, token="b")
    assert held.kind == "later" and receiver.seqs() == [1]
    clock.now += 2.2
    again = Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_p3", 1, token="a")
    assert again.kind == "delivered" and receiver.seqs() == [1, 1, 2]
    assert trackers.read(his_store, sub, "p3").delivered == 2


def test_it_dead_letters_after_the_last_attempt_and_lets_the_next_events_flow(his_store) -> None:
    sub = subscribe(his_store, "AdmissionStarted", "OrderReady")
    emit(his_store, "p4", "AdmissionStarted", "OrderReady")
    clock = Clock()
    receiver = Receiver(500, DeliveryFailed("TimeoutError"), 503)
    settings = Settings(backoff_base=1.0, max_attempts=3)
    for _ in range(3):
        outcome = Deliverer(his_store, receiver, settings, clock=clock).run(
            sub, "P_p4", 1, token="a"
        )
        clock.now += 10
    assert outcome.kind == "delivered" and receiver.seqs() == [1, 1, 1]
    # Event 2's own task: the dead letter no longer holds the patient's stream.
    assert (
        Deliverer(his_store, receiver, settings, clock=clock).run(sub, "P_p4", 2, token="b").kind
        == "delivered"
    )
    assert receiver.seqs() == [1, 1, 1, 2]
    [letter] = deadletters.all_letters(his_store)
    assert (letter.seq, letter.attempts, letter.reason) == (1, 3, "HTTP 503")
    # Replayed: delivered once more with the same delivery id, and the letter is gone.
    assert Deliverer(his_store, receiver, settings).replay(letter) == "delivered"
    assert receiver.got[-1][1]["X-HIS-Delivery"] == receiver.got[0][1]["X-HIS-Delivery"]
    assert deadletters.all_letters(his_store) == []


def test_a_task_finding_the_claim_taken_leaves_its_event_to_the_holder(his_store) -> None:
    sub = subscribe(his_store, "AdmissionStarted", "OrderReady")
    emit(his_store, "p5", "AdmissionStarted")
    clock = Clock()
    holder = trackers.save(
        his_store, trackers.Tracker(sub, "p5", claim="other", claim_until=clock.now + 30)
    )
    emit(his_store, "p5", "OrderReady")
    receiver = Receiver()
    queued = Deliverer(his_store, receiver, clock=clock).run(sub, "P_p5", 2, token="mine")
    assert queued.kind == "queued" and receiver.seqs() == []
    assert trackers.read(his_store, sub, "p5").wanted == 2
    # The holder's claim lapses (its worker died): the next run takes over and drains.
    clock.now += 31
    assert holder.claim == "other"
    done = Deliverer(his_store, receiver, clock=clock).run(sub, "P_p5", 1, token="new")
    assert done.kind == "delivered" and receiver.seqs() == [1, 2]
    assert trackers.read(his_store, sub, "p5").claim is None


def test_a_switched_off_subscription_gets_nothing(his_store) -> None:
    sub_id = subscribe(his_store, "AdmissionStarted")
    sub = subscriptions.get(his_store, sub_id)
    use_cases.set_active(use_cases.SetActive(sub_id, False, sub.version), his_store, actor=ADMIN)
    emit(his_store, "p6", "AdmissionStarted")
    receiver = Receiver()
    assert Deliverer(his_store, receiver).run(sub_id, "P_p6", 1, token="t").kind == "inactive"
    assert receiver.got == []


def test_a_secret_that_cannot_be_decrypted_counts_as_a_failed_delivery(his_store, settings) -> None:
    sub = subscribe(his_store, "AdmissionStarted")
    emit(his_store, "p7", "AdmissionStarted")
    settings.SECRET_KEY = "another-key-than-the-one-it-was-sealed-with"
    outcome = Deliverer(his_store, Receiver(), Settings(max_attempts=1)).run(
        sub, "P_p7", 1, token="t"
    )
    assert outcome.kind == "delivered" and outcome.delivered == 0
    [letter] = deadletters.all_letters(his_store)
    assert letter.reason.startswith("secret unreadable")
