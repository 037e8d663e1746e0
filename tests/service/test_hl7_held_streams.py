"""An HL7 fan-out that fails for good never freezes a patient's ADT out silently: its event
gets a fan-out letter and the stream is held for HL7; the patient's later events are parked
behind it, not sent out of order; /healthz, check_worklists, hl7_status and the message log
page say so; replay_dead_letters, once the cause is mended, fans them out again in order and
releases the stream, and the messages reach the engine (tests/hl7_engine.py) in sequence
order. Real embedded store, eager tasks, messages recorded instead of queued and then run
through the ordered drain with the MLLP transport (as in ``test_hl7_outbound``)."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from hisadmin.core import held_streams
from hl7v2.outbound import tasks
from tests.service.test_hl7_outbound import destination, drain, engine  # noqa: F401 - fixture
from webhooks.persistence import deadletters

pytestmark = [pytest.mark.service, pytest.mark.django_db]
# his_patient(orders=("lab",)): 1 registered (A04), 2 admitted (A01), 3 no known allergies
# (A08), 4 the order (not sent as ADT).
TYPES = ("PatientRegistered", "AdmissionStarted", "NoKnownAllergiesRecorded")


class Outage:
    """Makes the HL7 fan-out fail (as a store down would) for the events it names, while on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seqs: set[int] = set()
        real = tasks.fan_out_events

        def fan_out_events(store: Any, stream_pk: str, seqs: Any, send: Any, **kw: Any) -> int:
            seqs = list(seqs)
            if self.seqs & set(seqs):
                raise RuntimeError("store down")
            return real(store, stream_pk, seqs, send, **kw)

        monkeypatch.setattr(tasks, "fan_out_events", fan_out_events)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, int]]]:
    """The messages the fan-out queues, in order (no broker in service tests)."""
    queued: list[tuple[str, str, int]] = []
    monkeypatch.setattr(tasks, "queue_delivery", lambda *args: queued.append(args))
    monkeypatch.setattr(held_streams, "CACHE_SECONDS", 0.0)  # no settle wait in releases
    held_streams.forget()
    yield queued
    held_streams.forget()


def fan(stream: str, *seqs: int) -> str:
    """Run the real fan-out task eagerly (its retries and final failure included)."""
    held_streams.forget()  # as a second later: the process's cached markers refreshed
    return str(tasks.fan_out.apply(args=[stream, list(seqs)]).result)


@pytest.fixture
def held(his_store, his_patient, engine, sent, monkeypatch  # noqa: F811
         ) -> tuple[str, str, Outage]:
    """A destination; event 1 fanned out; the fan-out of event 2 failed for good."""
    dest = destination(his_store, engine, *TYPES)
    stream = f"P_{his_patient(orders=('lab',)).id}"
    outage = Outage(monkeypatch)
    assert fan(stream, 1) == "1 message(s)"
    outage.seqs = {2}
    fan(stream, 2)
    return dest, stream, outage


def letters(store, stream: str) -> list[tuple[int, int]]:
    return [(x.seq, x.attempts)
            for x in deadletters.fan_out_letters(store, stream, tasks.FAN_OUT_PREFIX)]


def test_a_failed_hl7_fan_out_holds_the_stream_parks_later_events_and_replay_releases_it(
        held, his_store, sent, engine, client, his_user, capsys) -> None:  # noqa: F811
    dest, stream, outage = held
    (letter,) = tasks.fan_out_letters(his_store)
    assert letter.id == f"hl7-fan-out.{stream}.0000000002" and letter.consumer == "hl7"
    assert (letter.seq, letter.event_type) == (2, "AdmissionStarted")
    assert letter.reason == "fan-out failed: RuntimeError: store down"
    assert letter.attempts == tasks.fan_out.max_retries + 1
    marker = held_streams.read(his_store, stream, held_streams.HL7)
    assert marker is not None and marker.seq == 2 and marker.reason == letter.reason
    assert held_streams.read(his_store, stream, held_streams.WEBHOOKS) is None
    assert deadletters.all_letters(his_store) == []  # not the webhooks' letters
    assert [seq for _, _, seq in sent] == [1]

    # Seen: /healthz, check_worklists, hl7_status and the message log page.
    answer = client.get("/healthz")
    assert answer.status_code == 503 and answer.json()["held_streams"]["streams"] == [stream]
    with pytest.raises(CommandError, match="held stream"):
        call_command("check_worklists")
    assert f"{stream}: held at event 2 (AdmissionStarted) for the hl7" in capsys.readouterr().out
    out = StringIO()
    call_command("hl7_status", stdout=out)
    assert f"held {stream} at event 2 (AdmissionStarted)" in out.getvalue()
    assert f"fan-out {stream}#2 AdmissionStarted after 9 attempt(s)" in out.getvalue()
    admin = Client()
    admin.force_login(his_user("hl7-admin-held", "admin"))
    page = admin.get("/admin/hl7-messages/").content.decode()
    assert "held for HL7 since event 2" in page and "store down" in page
    assert "Fan-out letters" in page

    # The cause mended: later events are parked all the same until released.
    outage.seqs = set()
    assert fan(stream, 3, 4) == "held at 2: parked"
    assert [seq for _, _, seq in sent] == [1]
    assert letters(his_store, stream) == [(2, 9), (3, 0), (4, 0)]

    # Still broken: replay keeps it held with the new error, nothing sent.
    outage.seqs = {2}
    call_command("replay_dead_letters")
    assert f"{stream} (hl7): still held (RuntimeError)" in capsys.readouterr().out
    assert letters(his_store, stream)[0] == (2, 10)
    assert [seq for _, _, seq in sent] == [1]

    outage.seqs = set()
    call_command("replay_dead_letters")
    out_text = capsys.readouterr().out
    assert f"{stream} (hl7): released: events 2, 3, 4 fanned out in order" in out_text
    assert "0 still held" in out_text
    held_streams.forget()
    assert held_streams.all_held(his_store) == [] and tasks.fan_out_letters(his_store) == []
    assert sent == [(dest, stream, 1), (dest, stream, 2), (dest, stream, 3)]  # 4 not wanted

    # The engine gets them in sequence order, each validated as v2.5.1 and accepted.
    for i, (dest_id, stream_pk, seq) in enumerate(sent):
        assert drain(his_store).run(dest_id, stream_pk, seq, token=f"t{i}").kind == "delivered"
    assert engine.triggers() == ["A04", "A01", "A08"]
    assert client.get("/healthz").json()["held_streams"] == {"ok": True, "count": 0,
                                                             "streams": []}
    call_command("check_worklists", "--repair")  # no relay here: the rows are written now
    assert "0 held stream(s)" in capsys.readouterr().out
    assert fan(stream, 4) == "0 message(s)"  # flowing again (the order is not sent as ADT)


def test_a_failed_hl7_fan_out_of_a_message_parks_its_other_events(
        his_store, his_patient, engine, sent, monkeypatch) -> None:  # noqa: F811
    dest = destination(his_store, engine, *TYPES)
    stream = f"P_{his_patient().id}"
    Outage(monkeypatch).seqs = {1}
    fan(stream, 1, 2, 3)
    assert letters(his_store, stream) == [(1, 9), (2, 0), (3, 0)]
    marker = held_streams.read(his_store, stream, held_streams.HL7)
    assert marker is not None and marker.seq == 1
    assert tasks.release_held(his_store, marker) == "still held (RuntimeError)"
    monkeypatch.undo()
    monkeypatch.setattr(tasks, "queue_delivery", lambda *args: sent.append(args))
    monkeypatch.setattr(held_streams, "CACHE_SECONDS", 0.0)
    assert tasks.release_held(his_store, held_streams.read(his_store, stream, held_streams.HL7)) \
        == "released: events 1, 2, 3 fanned out in order"
    assert sent == [(dest, stream, 1), (dest, stream, 2), (dest, stream, 3)]
