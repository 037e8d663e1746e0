"""A fan-out that fails for good never freezes a patient's webhooks silently: its event is
dead-lettered with its error and the stream held for the webhooks; the patient's later
events are parked behind it, not sent out of order; /healthz, check_worklists and the dead
letters page say so; replay_dead_letters (or the page's and API's replay), once the cause
is mended, fans them out again in order and releases the stream, or keeps it held with the
new error. Real embedded store, eager tasks, deliveries recorded instead of queued and then
run through the ordered drain with a fake receiver (as in ``test_webhook_drain``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from hisadmin.core import held_streams
from tests.service.test_webhook_drain import Receiver, emit, subscribe
from webhooks.delivery import fanout, tasks
from webhooks.delivery.drain import Deliverer
from webhooks.persistence import deadletters

pytestmark = [pytest.mark.service, pytest.mark.django_db,
              pytest.mark.synthetic_events("made-up events: the fan-out's holds and replays")]
TYPES = ("AdmissionStarted", "OrderReady")
STREAM = "P_h1"


class Outage:
    """Makes the fan-out fail (as a store down would) for the events it names, while on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seqs: set[int] = set()
        real = fanout.fan_out_events

        def fan_out_events(store: Any, stream_pk: str, seqs: Any, send: Any, **kw: Any) -> int:
            seqs = list(seqs)
            if self.seqs & set(seqs):
                raise RuntimeError("store down")
            return real(store, stream_pk, seqs, send, **kw)

        monkeypatch.setattr(fanout, "fan_out_events", fan_out_events)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, int]]]:
    """The deliveries the fan-out queues, in order (no broker in service tests)."""
    queued: list[tuple[str, str, int]] = []
    monkeypatch.setattr(tasks, "queue_delivery", lambda *args: queued.append(args))
    monkeypatch.setattr(held_streams, "CACHE_SECONDS", 0.0)  # no settle wait in releases
    held_streams.forget()
    yield queued
    held_streams.forget()


@pytest.fixture
def outage(monkeypatch: pytest.MonkeyPatch) -> Outage:
    return Outage(monkeypatch)


def fan(stream: str, *seqs: int) -> str:
    """Run the real fan-out task eagerly (its retries and final failure included)."""
    held_streams.forget()  # as a second later: the process's cached markers refreshed
    result = tasks.fan_out.apply(args=[stream, list(seqs)])
    return str(result.result)


@pytest.fixture
def held(his_store, sent, outage) -> str:
    """Subscribed; event 1 fanned out; the fan-out of event 2 failed for good."""
    sub = subscribe(his_store, *TYPES)
    emit(his_store, "h1", "AdmissionStarted", "OrderReady", "OrderReady", "AllergyAdded",
         "OrderReady")
    assert fan(STREAM, 1) == "1 delivery(ies)"
    outage.seqs = {2}
    fan(STREAM, 2)
    return sub


def fan_out_letters(store) -> list[tuple[int, int, str]]:
    return [(x.seq, x.attempts, x.reason) for x in deadletters.fan_out_letters(store, STREAM)]


def test_a_failed_fan_out_is_dead_lettered_with_its_error_and_holds_the_stream(
        held, his_store, sent) -> None:
    (letter,) = deadletters.all_letters(his_store)
    assert letter.kind == deadletters.FAN_OUT and letter.subscription_id == ""
    assert (letter.stream, letter.seq, letter.event_type) == (STREAM, 2, "OrderReady")
    assert letter.reason == "fan-out failed: RuntimeError: store down"
    assert letter.attempts == tasks.fan_out.max_retries + 1
    marker = held_streams.read(his_store, STREAM, held_streams.WEBHOOKS)
    assert marker is not None and (marker.seq, marker.event_type) == (2, "OrderReady")
    assert marker.reason == letter.reason and marker.occurred_at
    assert held_streams.read(his_store, STREAM) is None  # the projections' own are apart
    assert [seq for _, _, seq in sent] == [1]


def test_later_events_of_a_held_stream_are_parked_in_order_not_fanned_out(
        held, his_store, sent, outage) -> None:
    outage.seqs = set()  # the cause mended: parked all the same until released
    assert fan(STREAM, 3, 4) == "held at 2: parked"
    assert fan(STREAM, 5) == "held at 2: parked"
    assert [seq for _, _, seq in sent] == [1]
    letters = fan_out_letters(his_store)
    assert [(seq, attempts) for seq, attempts, _ in letters] == [(2, 9), (3, 0), (4, 0), (5, 0)]
    assert all(reason.startswith("HeldStream: waits for event 2") for *_, reason in letters[1:])
    # A message with events before the held one fans those out and parks the rest.
    held_streams.release(his_store, held_streams.read(his_store, STREAM, held_streams.WEBHOOKS))
    held_streams.hold(his_store, stream_pk=STREAM, seq=2, event_type=None, occurred_at=None,
                      reason="again", consumer=held_streams.WEBHOOKS)
    sent.clear()
    assert fan(STREAM, 1, 2) == "1 delivery(ies); held at 2: the rest parked"
    assert [seq for _, _, seq in sent] == [1]


def test_healthz_check_worklists_and_the_dead_letters_page_name_the_held_stream(
        held, his_store, client, his_user, his_api_client, capsys) -> None:
    answer = client.get("/healthz")
    assert answer.status_code == 503
    assert answer.json()["held_streams"] == {"ok": False, "count": 1, "streams": [STREAM]}
    with pytest.raises(CommandError, match="held stream"):
        call_command("check_worklists")
    out = capsys.readouterr().out
    assert f"{STREAM}: held at event 2 (OrderReady) for the webhooks" in out
    admin = Client()
    admin.force_login(his_user("hook-admin-held", "admin"))
    page = admin.get("/admin/webhooks/dead-letters/").content.decode()
    assert "fan-out: no subscription reached" in page
    assert "held for the webhooks since event 2" in page and "store down" in page
    (listed,) = his_api_client("admin").get("/api/v1/webhooks/dead-letters").json()
    assert (listed["id"], listed["subscription_id"], listed["seq"]) == (
        f"fan-out.{STREAM}.0000000002", "", 2)


def test_replay_releases_the_stream_in_order_or_keeps_it_held_with_the_new_error(
        held, his_store, sent, outage, client, capsys) -> None:
    sub = held
    fan(STREAM, 3, 4, 5)
    outage.seqs = {2, 3}  # still broken: nothing is sent, the hold says the new error
    held_streams.forget()
    call_command("replay_dead_letters")
    assert f"{STREAM} (webhooks): still held (RuntimeError)" in capsys.readouterr().out
    marker = held_streams.read(his_store, STREAM, held_streams.WEBHOOKS)
    assert marker is not None and marker.seq == 2
    assert fan_out_letters(his_store)[0][:2] == (2, 10)
    assert [seq for _, _, seq in sent] == [1]

    outage.seqs = set()  # mended
    call_command("replay_dead_letters")
    out = capsys.readouterr().out
    assert f"{STREAM} (webhooks): released: events 2, 3, 4, 5 fanned out in order" in out
    assert "0 still held" in out
    held_streams.forget()
    assert held_streams.all_held(his_store) == [] and deadletters.all_letters(his_store) == []
    assert sent == [(sub, STREAM, 1), (sub, STREAM, 2), (sub, STREAM, 3), (sub, STREAM, 5)]
    receiver = Receiver()
    for i, (sub_id, stream, seq) in enumerate(sent):
        Deliverer(his_store, receiver).run(sub_id, stream, seq, token=f"t{i}")
    assert receiver.seqs() == [1, 2, 3, 5]  # in order; 4 (AllergyAdded) is not wanted
    assert client.get("/healthz").json()["held_streams"] == {"ok": True, "count": 0,
                                                             "streams": []}
    call_command("check_worklists")
    emit(his_store, "h1", "OrderReady")  # later events flow again
    assert fan(STREAM, 6) == "1 delivery(ies)"


def test_the_pages_and_apis_replay_of_a_fan_out_letter_releases_the_stream(
        held, his_store, sent, outage) -> None:
    sub = held
    fan(STREAM, 3)
    outage.seqs = set()
    letter = deadletters.fan_out_letters(his_store, STREAM)[-1]  # any of the stream's
    assert tasks.replay.apply(args=[letter.id]).result == (
        "released: events 2, 3 fanned out in order")
    held_streams.forget()
    assert held_streams.all_held(his_store) == [] and deadletters.all_letters(his_store) == []
    assert sent[1:] == [(sub, STREAM, 2), (sub, STREAM, 3)]
    assert tasks.replay.apply(args=[letter.id]).result == "gone"


def test_a_held_stream_whose_letters_are_gone_is_fanned_out_from_its_held_event(
        held, his_store, sent, outage) -> None:
    sub = held
    outage.seqs = set()
    for letter in deadletters.all_letters(his_store):
        deadletters.remove(his_store, letter)  # expired
    marker = held_streams.read(his_store, STREAM, held_streams.WEBHOOKS)
    assert tasks.release_held(his_store, marker) == (
        "released: events 2, 3, 4, 5 fanned out in order")
    assert sent[1:] == [(sub, STREAM, 2), (sub, STREAM, 3), (sub, STREAM, 5)]
