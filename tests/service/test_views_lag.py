"""The views' end-to-end lag, as the relay publishes it, and the admission control it drives:
a command waits while the views are behind their bound, never past the cap, never with an
error; reads never wait. Against a real Redis (the broker every process shares)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis
from django.core.management import call_command

from cosmos_backend import errors
from hisadmin.core import keys, views_lag
from hisadmin.core.store import get_lease_store
from hisadmin.embedded_redis import EmbeddedRedis
from patients import tasks as patient_tasks
from patients.tasks import FOLLOW_UP_TASK, follow_up, follow_up_page
from patients.tasks import PAGE_TASK as FOLLOW_UP_PAGE
from tests import worklist_data as data
from worklists.delivery import tasks
from worklists.delivery.relay import Relay, applying_here, consumer_publisher
from worklists.persistence import generations
from worklists.persistence.trackers import read_tracker

pytestmark = [pytest.mark.service, pytest.mark.django_db(transaction=True)]
JSON = "application/json"


@pytest.fixture
def broker(tmp_path: Path, settings) -> Iterator[EmbeddedRedis]:
    redis = EmbeddedRedis(tmp_path / "redis")
    settings.CELERY_BROKER_URL = redis.celery_url
    settings.VIEWS_LAG_BOUND_MS = 250
    settings.VIEWS_ADMISSION_CAP_MS = 600
    yield redis
    redis.shutdown()


def _relay(store, sent: list) -> Relay:
    return Relay(store, get_lease_store(), consumer_publisher(
        lambda task, args, **_: sent.append((task, args))), owner="relay-test")


def _project_then_stop(relay: Relay, store, streams: list, marks: list) -> None:
    """Project the page as the worker does; the relay's next step sees the views current."""
    tasks.apply_page(store, streams)
    tasks.mark_pages(marks)
    relay.step()
    assert views_lag.lag_ms() == 0.0
    relay.release_all()
    views_lag.withdraw(relay.owner)


def test_the_relay_publishes_how_long_its_pages_wait_for_their_views(
        broker, his_store, his_reference_data) -> None:
    sent: list = []
    relay = _relay(his_store, sent)
    while relay.step():  # the reference data's events, projected at once
        pass
    for _, args in sent:
        if len(args) == 2:
            tasks.apply_page(his_store, args[0])
            tasks.mark_pages(args[1])
    sent.clear()
    relay.step()
    assert views_lag.lag_ms() == 0.0

    pid = data.register(his_store, "Weiß-Ångström", "Chloé")
    relay.step()  # handed over, not projected yet
    # The page for the views (the registration's follow-up, its possible duplicates, is sent
    # beside it to its own task).
    [[streams, marks]] = [args for task, args in sent if task == tasks.PAGE_TASK]
    assert streams == [[f"P_{pid}", [1]]]
    time.sleep(0.3)
    relay.step()
    behind = views_lag.lag_ms()
    assert behind is not None and behind >= 300

    _project_then_stop(relay, his_store, streams, marks)
    assert views_lag.lag_ms() is None  # no relay: unknown, and nothing waits on it


def test_a_lost_page_keeps_counting_after_later_pages_are_projected_and_is_sent_again(
        broker, his_store, his_reference_data) -> None:
    """A page whose messages are lost (its worker killed whole: Redis keeps a message
    unacknowledged for the visibility timeout, an hour) stays in the lag however many pages
    after it are projected, and the relay sends exactly its unhandled messages again once
    it is overdue and nothing waits in their queues: the projections' page, and a follow-up
    page lost after its views were projected."""
    sent: list = []
    relay = _relay(his_store, sent)
    relay.redrive_after = 5.0

    def handle(task: str, args: list) -> None:
        """What the worker does with a page message."""
        if task == tasks.PAGE_TASK:
            tasks.apply_page(his_store, args[0])
            tasks.mark_pages(args[1])
        elif task == FOLLOW_UP_PAGE:
            follow_up_page(*args)

    while relay.step():
        pass
    for task, args in sent:
        handle(task, args)
    sent.clear()

    lost = data.register(his_store, "Verloren", "Zoë")
    relay.step()
    lost_messages = [[task, args] for task, args in sent]
    [lost_page] = [args for task, args in sent if task == tasks.PAGE_TASK]
    assert lost_page[0] == [[f"P_{lost}", [1]]]
    # Its possible-duplicates check goes as a follow-up page beside it.
    assert sorted(task for task, _ in lost_messages) == [FOLLOW_UP_PAGE, tasks.PAGE_TASK]
    sent.clear()
    later = data.register(his_store, "Später", "Åsa")
    relay.step()
    for task, args in sent:
        handle(task, args)  # its ranges' positions now past the lost page's
    [later_marks] = [args[1] for task, args in sent if task == tasks.PAGE_TASK]
    assert views_lag.projected_positions()[later_marks[0]["range"]] > \
        lost_page[1][0]["position"]
    time.sleep(0.3)
    relay.step()
    behind = views_lag.lag_ms()
    assert behind is not None and behind >= 300  # the lost page still counts
    sent.clear()

    # Not yet overdue: nothing sent again.
    assert relay.redrive(time.time() + 1) == 0
    # Overdue, but a message waits in the projections' queue: the views' page may be
    # behind it, late, not lost, and is not sent; the follow-up page's queue is empty.
    client = redis.Redis(unix_socket_path=broker.socket)
    client.rpush(tasks.QUEUE, b"{}")
    assert relay.redrive(time.time() + 60) == 1
    assert [task for task, _ in sent] == [FOLLOW_UP_PAGE]
    client.delete(tasks.QUEUE)
    sent.clear()
    # Overdue again with the queues empty: the very messages the page was sent as, once.
    assert relay.redrive(time.time() + 120) == 1
    assert sorted([task, args] for task, args in sent) == sorted(lost_messages)
    assert relay.stats.redriven == 2
    # Sent again a moment ago: not again until it is overdue once more.
    assert relay.redrive(time.time() + 122) == 0
    status = StringIO()
    call_command("relay_status", "--json", stdout=status)
    end_to_end = json.loads(status.getvalue())["endToEnd"]
    assert end_to_end["pendingPages"] == 1 and end_to_end["redriven"] == 2
    status = StringIO()
    call_command("relay_status", stdout=status)
    assert "; sent again, not handled in time: 2" in status.getvalue()

    # The views' page projected, its follow-up page lost again: the lag is back to 0 (it
    # is the views'), and only the follow-up page is sent again.
    handle(tasks.PAGE_TASK, lost_page)
    relay.step()
    assert views_lag.lag_ms() == 0.0 and views_lag.pending_pages() == {}
    sent.clear()
    assert relay.redrive(time.time() + 240) == 1
    [[task, args]] = sent
    assert [task, args] in lost_messages and task == FOLLOW_UP_PAGE
    handle(task, args)
    assert views_lag.unfinished_pages() == {}
    assert relay.redrive(time.time() + 360) == 0
    relay.release_all()
    views_lag.withdraw(relay.owner)
    gen = generations.pointer(his_store)["active"]
    assert [read_tracker(his_store, pid, gen).state.seq for pid in (lost, later)] == [1, 1]


def test_a_command_waits_while_the_views_are_behind_but_never_past_the_cap(
        broker, his_patient, his_api_client, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded = his_patient("Nguyễn", given="Thị", orders=("medication",))
    nurse = seeded.clients["nurse"]
    views_lag.publish_lag("relay-a", 900.0)  # far behind, and it stays so
    # A process reads the published lag at most every _READ_EVERY outside a wait: the
    # seeding's last command read "no lag" a moment ago, and a command within that moment
    # may still go on that reading (on a quiet machine it came within it).
    time.sleep(views_lag._READ_EVERY * 2)
    started = time.monotonic()
    answer = nurse.post(f"/api/v1/patients/{seeded.id}/orders/{seeded.orders['medication']}"
                        "/ready", content_type=JSON)
    took = time.monotonic() - started
    assert answer.status_code == 200, answer.content  # waited, then committed: no 5xx
    timing = answer["Server-Timing"]
    assert timing.startswith("admission;dur=") and 'desc="waited for the views"' in timing
    waited = float(timing.split("dur=")[1].split(";")[0])
    assert 600 <= waited < 900 and took >= 0.6
    counts = views_lag.admission_counts()
    assert counts["waits"] == 1 and counts["capped"] == 1 and counts["waited_ms"] >= 600

    # Reads never wait, however far behind the views are.
    read = nurse.get(f"/api/v1/patients/{seeded.id}")
    assert read.status_code == 200 and "Server-Timing" not in read
    assert views_lag.admission_counts()["waits"] == 1  # the command's, no other

    # The views catch up while a command waits: it goes on then, not at the cap. The
    # catch-up comes 0.15 s after the wait began (timed from the wait's first sleep, not
    # from before the request: on a loaded machine the request reached its wait late).
    catching_up: list[threading.Timer] = []

    def sleep(seconds: float) -> None:
        if not catching_up:
            catching_up.append(threading.Timer(0.15, views_lag.publish_lag,
                                               ("relay-a", 40.0)))
            catching_up[0].start()
        time.sleep(seconds)

    monkeypatch.setattr(views_lag, "time",
                        SimpleNamespace(monotonic=time.monotonic, time=time.time,
                                                  sleep=sleep))
    answer = seeded.clients["clinician"].post(
        f"/api/v1/patients/{seeded.id}/allergies", {"substance": "Erdnüsse", "reaction": "rash",
                                                     "severity": "mild"}, content_type=JSON)
    monkeypatch.undo()
    assert answer.status_code == 200, answer.content
    waited = float(answer["Server-Timing"].split("dur=")[1].split(";")[0])
    assert waited >= 150
    counts = views_lag.admission_counts()
    assert counts["waits"] == 2 and counts["capped"] == 1  # went on before the cap

    # Within the bound: no wait, no Server-Timing entry.
    answer = seeded.clients["clinician"].post(
        f"/api/v1/patients/{seeded.id}/allergies", {"substance": "Latex", "reaction": "itch",
                                                     "severity": "mild"}, content_type=JSON)
    assert answer.status_code == 200 and "Server-Timing" not in answer


def test_healthz_relay_status_and_the_lists_show_the_lag(
        broker, his_store, his_reference_data, client, his_user) -> None:
    views_lag.publish_lag("relay-b", 420.0)
    body = client.get("/healthz").json()
    assert body["relay"]["lag"]["ms"] == 420.0 and body["relay"]["lag"]["boundMs"] == 250
    assert body["relay"]["admission"] == {"waits": 0, "waited_ms": 0.0, "capped": 0}
    assert body["relay"]["redriven"] == 0
    out = StringIO()
    call_command("relay_status", stdout=out)
    assert "views behind the record, end to end: 420 ms (bound 250 ms)" in out.getvalue()
    out = StringIO()
    call_command("relay_status", "--json", stdout=out)
    assert json.loads(out.getvalue())["endToEnd"]["ms"] == 420.0
    client.force_login(his_user("lag-nurse", "nurse"))
    html = client.get("/admin/worklists/admitted/?department=MED").content.decode()
    assert "420 ms behind" in html


def test_a_page_not_projected_for_30_s_degrades_healthz_and_stops_the_lists_updates(
        broker, his_store, his_reference_data, client, his_user) -> None:
    """No worker has projected a page the relay handed over for 45 s (every worker dead, or
    the page lost and sent again in vain): /healthz answers 503 saying so, and the lists show
    that their updates stopped, not merely that they are behind."""
    views_lag.publish_lag("relay-c", 45_000.0)
    answer = client.get("/healthz")
    assert answer.status_code == 503
    relay = answer.json()["relay"]
    assert relay["ok"] is False and relay["error"].startswith("views 45 s behind")
    client.force_login(his_user("stopped-nurse", "nurse"))
    # Published again, as a live relay does every poll: a figure older than FRESH_SECONDS is
    # a relay gone, and a busy machine may take that long between the two reads.
    views_lag.publish_lag("relay-c", 45_000.0)
    html = client.get("/admin/worklists/admitted/?department=MED").content.decode()
    assert "⚠ Updates stopped" in html and "stopped-ago\">45 s</span> ago" in html
    assert "45 s behind" in html
    views_lag.withdraw("relay-c")


def test_a_step_hands_every_ranges_page_over_in_one_message_per_consumer(
        broker, his_store, his_reference_data) -> None:
    sent: list = []
    relay = _relay(his_store, sent)
    while relay.step():  # the reference data's events
        pass
    sent.clear()
    pids = [data.register(his_store, f"Ibáñez-{i}", "Zoë") for i in range(12)]
    relay.step()
    pages = [args for task, args in sent if task == tasks.PAGE_TASK]
    follow_ups = [args for task, args in sent if task == FOLLOW_UP_PAGE]
    # One message for the projections and one for the follow-ups (the duplicate checks),
    # each carrying every patient's stream, whatever range it is in, and each range's mark.
    assert len(pages) == 1 and len(follow_ups) == 1
    [[streams, marks]] = pages
    assert sorted(s for s, _ in streams) == sorted(keys.patient(pid) for pid in pids)
    assert sorted(s for s, _ in follow_ups[0][0]) == sorted(keys.patient(pid) for pid in pids)
    assert len(marks) == len({m["range"] for m in marks}) > 1  # 12 patients, 4 ranges
    _project_then_stop(relay, his_store, streams, marks)


def test_relay_status_says_unknown_where_it_cannot_read_the_broker(
        his_store, his_reference_data, settings) -> None:
    """Run where no broker is configured (an operator's shell without the services'
    REDIS_URL): the pages pending and the commands held are unknown, not zero."""
    settings.CELERY_BROKER_URL = ""
    out = StringIO()
    call_command("relay_status", stdout=out)
    text = " ".join(out.getvalue().split())
    assert "pages handed to the projections: unknown" in text
    assert "commands held for the views" not in text
    out = StringIO()
    call_command("relay_status", "--json", stdout=out)
    end_to_end = json.loads(out.getvalue())["endToEnd"]
    assert end_to_end["pendingPages"] is None and end_to_end["admission"] == {}


def test_a_follow_up_sent_on_alone_and_lost_with_its_worker_is_sent_again(
        broker, his_store, his_reference_data, monkeypatch: pytest.MonkeyPatch) -> None:
    """One stream's follow-up fails in its page and goes on alone as a message of its own;
    the worker holding that message is lost (Redis keeps it for the visibility timeout, an
    hour). The relay keeps it unfinished like the page's own messages and sends it again
    once overdue; a retry waiting for its backoff counts from when it is due, not before;
    given up, it is off the unfinished (handled: tests/service/test_beds.py)."""
    sent: list = []
    relay = _relay(his_store, sent)
    relay.redrive_after = 5.0
    while relay.step():
        pass
    for task, args in sent:
        if task == tasks.PAGE_TASK:
            tasks.apply_page(his_store, args[0])
            tasks.mark_pages(args[1])
        elif task == FOLLOW_UP_PAGE:
            follow_up_page(*args)
    sent.clear()

    pid = data.register(his_store, "Alleinová", "Øyvind")
    relay.step()
    [page] = [args for task, args in sent if task == FOLLOW_UP_PAGE]
    [views] = [args for task, args in sent if task == tasks.PAGE_TASK]
    tasks.apply_page(his_store, views[0])
    tasks.mark_pages(views[1])
    real = patient_tasks._follow_up

    def refused(stream_pk: str, seq: int) -> str:
        raise RuntimeError("the store said no")

    monkeypatch.setattr(patient_tasks, "_follow_up", refused)
    assert follow_up_page(*page) == "1 streams, 1 sent on alone"
    monkeypatch.setattr(patient_tasks, "_follow_up", real)
    client = redis.Redis(unix_socket_path=broker.socket)
    assert client.llen("celery") == 1
    client.delete("celery")  # taken by a worker that was then killed whole
    [[(_, noted)]] = views_lag.unfinished_pages().values()
    assert noted == [FOLLOW_UP_TASK, "celery", [f"P_{pid}", [1], page[1]]]
    sent.clear()

    assert relay.redrive(time.time() + 1) == 0  # not overdue yet
    assert relay.redrive(time.time() + 60) == 1
    [[task, args]] = sent
    assert [task, args] == [FOLLOW_UP_TASK, [f"P_{pid}", [1], page[1]]]
    # Sent again and failing once more: its retry is due in up to 2 ** retries seconds, and
    # it counts from then.
    before = time.time()
    follow_up.on_retry(RuntimeError("again"), "task-id", args, {}, None)
    [[(at, _)]] = views_lag.unfinished_pages().values()
    assert before + 1 <= at <= time.time() + 1
    # Given up after its retries: off the unfinished too (the failure is logged), not sent
    # again for ever.
    follow_up.on_failure(RuntimeError("again"), "task-id", args, {}, None)
    assert views_lag.unfinished_pages() == {}
    assert follow_up(*args) == "nothing to do"  # what the message does, run again
    sent.clear()
    assert relay.redrive(time.time() + 120) == 0 and sent == []
    relay.release_all()
    views_lag.withdraw(relay.owner)


def test_a_relay_that_applies_pages_itself_leaves_nothing_pending_and_hands_on_a_failed_one(
        broker, his_store, his_reference_data, monkeypatch) -> None:
    """The light mode's relay (a thread of the worker) applies the projections' page in its
    own thread: the step returns with the views current and nothing pending, and only the
    follow-ups' page goes through the broker. A page it cannot apply (the store refusing)
    is sent to the workers after all, noted pending, and their retry brings the views up."""
    sent: list = []
    send = applying_here({tasks.PAGE_TASK: tasks.project_page_here},
                         lambda task, args, **_: sent.append((task, args)))
    relay = Relay(his_store, get_lease_store(), consumer_publisher(send), owner="applies")
    while relay.step():  # the reference data's events
        pass
    sent.clear()
    gen = generations.pointer(his_store)["active"]

    pid = data.register(his_store, "Ødegård-Nguyễn", "Zoë")
    relay.step()
    assert read_tracker(his_store, pid, gen).state.seq == 1  # projected in the step
    assert [task for task, _ in sent] == [FOLLOW_UP_PAGE]  # no message for the views
    assert views_lag.pending_pages() == {} and views_lag.lag_ms() == 0.0
    follow_up_page(*sent[0][1])
    assert views_lag.unfinished_pages() == {}
    sent.clear()

    def refused(store, streams, alone=None):
        raise errors.Unavailable("the views' store is not answering")

    monkeypatch.setattr(tasks, "apply_page", refused)
    other = data.register(his_store, "Þórsdóttir", "Ásta")
    relay.step()
    monkeypatch.undo()
    assert read_tracker(his_store, other, gen).etag is None  # not applied
    [page] = [args for task, args in sent if task == tasks.PAGE_TASK]  # sent instead
    assert views_lag.pending_pages()  # and counted in the lag until a worker applies it
    tasks.apply_page(his_store, page[0])
    tasks.mark_pages(page[1])
    relay.step()
    assert read_tracker(his_store, other, gen).state.seq == 1
    assert views_lag.pending_pages() == {} and views_lag.lag_ms() == 0.0
    relay.release_all()
    views_lag.withdraw(relay.owner)
