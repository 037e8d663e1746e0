"""Webhooks end to end with real processes: the relay, a Celery worker on the ``webhooks``
queue, Redis, and a real HTTP receiver in this process. Delivery and signature, a retry after
a 500, a dead letter after repeated failures, order per patient, and a worker killed
mid-delivery: delivered at least once, with the same delivery id."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import psutil
import pytest

from cosmos_backend.store import DocumentStore
from hisadmin.core.actor import Actor
from tests import worklist_data as data
from tests.integration.processes import BIN, start, wait_for
from tests.integration.test_faults_worklists import settled
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    stack_per_test,
    worklist_stack,
)
from webhooks import use_cases
from webhooks.domain import signing
from webhooks.persistence import deadletters, trackers

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.django_db]
ADMIN = Actor(id="1", username="admin", roles=("admin",))
SECRET = "integration-secret-0123456789"
EVENTS = ["PatientRegistered", "AdmissionStarted", "ImagingExamRequested"]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    raw: bytes
    status: int
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def body(self) -> dict:
        return json.loads(self.raw)


@dataclass
class Receiver:
    """Paths choose the behaviour: ``/ok``; ``/fail-once`` (500, then 200 for each delivery
    id); ``/dead`` (always 500); ``/slow-once`` (holds the first request of each delivery id
    for 8 s, answers later ones at once); ``/slow`` (every answer takes 6 s)."""

    got: list[Received] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, float]:
        key = (path, headers.get("X-HIS-Delivery", ""))
        with self.lock:
            first = key not in self.seen
            self.seen.add(key)
        if path == "/dead" or (path == "/fail-once" and first):
            return 500, 0.0
        if path == "/slow-once" and first:
            return 200, 8.0
        if path == "/slow":
            return 200, 6.0
        return 200, 0.0

    def of(self, path: str, patient: str | None = None) -> list[Received]:
        with self.lock:
            return [
                r
                for r in self.got
                if r.path == path and (patient is None or r.body["patient_id"] == patient)
            ]


# The test's receiver listens on this host, which deliveries may reach only when named.
RECEIVER_REACHABLE = {"WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    recv = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k: v for k, v in self.headers.items()}
            status, delay = recv.answer(self.path, headers, raw)
            with recv.lock:
                recv.got.append(Received(self.path, headers, raw, status))
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass  # the worker that sent it was killed meanwhile

        def log_message(self, *args: object) -> None:
            pass

    recv.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recv.server.daemon_threads = True
    thread = threading.Thread(target=recv.server.serve_forever, daemon=True)
    thread.start()
    yield recv
    recv.server.shutdown()
    recv.server.server_close()


def webhook_worker(
    stack: WorklistStack, name: str = "hooks", queues: str = "webhooks,celery"
) -> object:
    env = {
        **stack.env,
        "WEBHOOK_MAX_ATTEMPTS": "3",
        "WEBHOOK_BACKOFF_BASE": "0.2",
        "WEBHOOK_TIMEOUT": "10",
        **RECEIVER_REACHABLE,
    }
    proc = start(
        [
            str(BIN / "celery"),
            "-A",
            "hisadmin",
            "worker",
            "-Q",
            queues,
            "--concurrency",
            "2",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel",
            "INFO",
            "--pool",
            "prefork",
        ],
        env,
        stack.base / f"{name}.log",
    )
    stack.procs.append(proc)
    return proc


def subscribe(store: DocumentStore, url: str) -> str:
    with mock.patch.dict(os.environ, RECEIVER_REACHABLE):  # named here as for the workers
        sub, _ = use_cases.subscribe(
            use_cases.Subscribe(url=url, events=EVENTS, secret=SECRET),
            store,
            actor=ADMIN,
            now=datetime.now(UTC) - timedelta(seconds=1),
        )
    return sub.id


def admitted_with_order(store: DocumentStore, family: str) -> str:
    pid = data.register(store, family, "Hook")
    adm = data.admit(store, pid, "MED", "MED-1")
    data.place_order(store, pid, adm, department="MED")
    return pid


def test_it_delivers_signed_events_in_order_per_patient(stack, receiver) -> None:
    store = stack.store()
    sub = subscribe(store, receiver.url("/ok"))
    webhook_worker(stack)
    stack.relay()
    patients = [admitted_with_order(store, f"Order{i}") for i in range(4)]
    wait_for(
        lambda: all(len(receiver.of("/ok", p)) >= 3 for p in patients),
        60,
        interval=0.2,
        what="three deliveries per patient",
    )
    for pid in patients:
        got = receiver.of("/ok", pid)
        seqs = [r.body["seq"] for r in got]
        assert seqs == sorted(seqs) and sorted(set(seqs)) == [1, 2, 3], seqs
        assert [r.body["type"] for r in got] == EVENTS
        for r in got:
            assert signing.verify(r.raw, SECRET, r.headers["X-HIS-Signature"])
            assert r.headers["X-HIS-Delivery"] == signing.delivery_id(
                sub, f"P_{pid}", r.body["seq"]
            )
            assert r.body["event_id"] and r.body["occurred_at"] and "data" in r.body
    assert "Hook" not in stack.log("hooks")  # no patient data in the worker's log


def test_it_retries_after_a_500_and_dead_letters_after_repeated_failures(stack, receiver) -> None:
    store = stack.store()
    flaky = subscribe(store, receiver.url("/fail-once"))
    dead = subscribe(store, receiver.url("/dead"))
    webhook_worker(stack)
    stack.relay()
    pid = data.register(store, "Flaky", "Hook")
    wait_for(lambda: len(receiver.of("/fail-once", pid)) >= 2, 30, interval=0.1, what="the retry")
    first, second = receiver.of("/fail-once", pid)[:2]
    assert (first.status, second.status) == (500, 200)
    assert first.headers["X-HIS-Delivery"] == second.headers["X-HIS-Delivery"]
    assert first.raw == second.raw
    wait_for(lambda: trackers.read(store, flaky, pid).delivered == 1, 20, what="tracker")

    wait_for(
        lambda: [x for x in deadletters.all_letters(store) if x.subscription_id == dead],
        30,
        interval=0.2,
        what="the dead letter",
    )
    [letter] = [x for x in deadletters.all_letters(store) if x.subscription_id == dead]
    assert (letter.stream, letter.seq, letter.attempts) == (f"P_{pid}", 1, 3)
    assert letter.reason == "HTTP 500" and letter.event_type == "PatientRegistered"
    assert len(receiver.of("/dead", pid)) == 3
    # The patient's next event is not held behind the dead letter.
    data.admit(store, pid, "MED", "MED-1")
    wait_for(
        lambda: any(r.body["seq"] == 2 for r in receiver.of("/dead", pid)),
        30,
        interval=0.2,
        what="the next event",
    )


def test_a_worker_killed_mid_delivery_still_delivers_with_the_same_id(stack, receiver) -> None:
    store = stack.store()
    sub = subscribe(store, receiver.url("/slow-once"))
    worker = webhook_worker(stack, "hooks-killed")
    stack.relay()
    pid = data.register(store, "Killed", "Hook")
    wait_for(
        lambda: receiver.of("/slow-once", pid),
        30,
        interval=0.02,
        what="the first delivery to be under way",
    )
    started = time.monotonic()
    children = psutil.Process(worker.pid).children(recursive=True)
    assert children, "prefork pool child not found"
    for child in children:
        child.kill()  # the pool process dies holding the unacknowledged delivery
    wait_for(
        lambda: len(receiver.of("/slow-once", pid)) >= 2, 30, interval=0.05, what="the redelivery"
    )
    assert time.monotonic() - started < 8  # redelivered, not a timeout of the held request
    first, again = receiver.of("/slow-once", pid)[:2]
    assert first.headers["X-HIS-Delivery"] == again.headers["X-HIS-Delivery"]
    assert first.raw == again.raw
    wait_for(lambda: trackers.read(store, sub, pid).delivered == 1, 20, what="delivered")


def test_a_slow_receiver_slows_neither_other_subscribers_nor_the_worklists(stack, receiver) -> None:
    store = stack.store()
    subscribe(store, receiver.url("/slow"))
    subscribe(store, receiver.url("/ok"))
    stack.worker()  # projections and the default queue (the fan-out), as in production
    webhook_worker(stack, "hooks-slow", queues="webhooks")
    stack.relay()
    pid = data.register(store, "Unhurried", "Hook")
    wait_for(lambda: receiver.of("/slow", pid), 20, interval=0.05, what="the slow delivery")
    wait_for(lambda: receiver.of("/ok", pid), 20, interval=0.05, what="the other subscriber")
    wait_for(lambda: settled(store, [pid]), 20, interval=0.05, what="the worklists")
    slow = receiver.of("/slow", pid)[0]
    assert time.monotonic() < slow.at + 6  # done while the slow receiver still holds its answer
