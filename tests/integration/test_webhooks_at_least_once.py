"""Webhooks are at least once, in order per patient, whichever way the processes run.

A receiver that refuses about one delivery in five at random (500s, and a timeout or two)
while several events of each patient are in flight at once: every event still arrives,
each patient's in ``seq`` order of first acceptance, and nothing is dead-lettered. With one
event refused for good, that event is dead-lettered after its attempts, the patient's later
events wait for it and then flow, in order (docs/webhooks.md). Run in the launcher's light
mode (one worker process: thread pool, webhook lane, relay thread) and with the processes
apart (a projections worker, a webhooks worker, ``run_relay``).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

import pytest

from cosmos_backend.store import DocumentStore
from hisadmin.core.actor import Actor
from tests import worklist_data as data
from tests.integration.processes import BIN, start, start_light_worker, wait_for
from tests.integration.test_webhooks_delivery import RECEIVER_REACHABLE
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    stack_per_test,
    worklist_stack,
)
from webhooks import use_cases
from webhooks.persistence import deadletters, trackers

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.django_db]
ADMIN = Actor(id="1", username="admin", roles=("admin",))
SECRET = "integration-secret-0123456789"
EVENTS = ["PatientRegistered", "AdmissionStarted", "ImagingExamRequested"]
TIMEOUT = 1.0  # WEBHOOK_TIMEOUT of the workers
MAX_ATTEMPTS = 6  # the receiver refuses one delivery at most three times in a row
SETTINGS = {
    "WEBHOOK_TIMEOUT": str(TIMEOUT),
    "WEBHOOK_BACKOFF_BASE": "0.1",
    "WEBHOOK_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
    **RECEIVER_REACHABLE,
}
PATIENTS = 4
ORDERS = 14  # per patient: 16 events each (registered, admitted, the orders)


@dataclass(frozen=True)
class Attempt:
    delivery: str  # X-HIS-Delivery
    patient: str
    seq: int
    accepted: bool


@dataclass
class FlakyReceiver:
    """Refuses about one delivery in five (seeded): a 500, or at most ``timeouts`` times no
    answer within the workers' timeout; never more than three times in a row for one
    delivery id, so ``MAX_ATTEMPTS`` always suffice. Deliveries in ``doomed`` always fail."""

    rng: random.Random = field(default_factory=lambda: random.Random(23))
    timeouts: int = 2
    doomed: set[tuple[str, int]] = field(default_factory=set)  # (patient, seq)
    refused_in_a_row: dict[str, int] = field(default_factory=dict)
    attempts: list[Attempt] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/flaky"

    def answer(self, delivery: str, patient: str, seq: int) -> tuple[int, float]:
        """(status, seconds to hold the answer); the attempt is recorded before answering,
        so the order of ``attempts`` is the order the receiver saw them in."""
        with self.lock:
            if (patient, seq) in self.doomed:
                status, hold = 500, 0.0
            elif self.refused_in_a_row.get(delivery, 0) < 3 and self.rng.random() < 0.2:
                if self.timeouts > 0 and self.rng.random() < 0.15:
                    self.timeouts -= 1
                    status, hold = 200, TIMEOUT + 0.5  # too late: the worker gave up
                else:
                    status, hold = 500, 0.0
            else:
                status, hold = 200, 0.0
            accepted = status == 200 and hold == 0.0
            self.refused_in_a_row[delivery] = (
                0 if accepted else self.refused_in_a_row.get(delivery, 0) + 1
            )
            self.attempts.append(Attempt(delivery, patient, seq, accepted))
        return status, hold

    def of(self, patient: str) -> list[Attempt]:
        with self.lock:
            return [a for a in self.attempts if a.patient == patient]


@pytest.fixture
def flaky() -> Iterator[FlakyReceiver]:
    import json

    recv = FlakyReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw)
            status, hold = recv.answer(
                self.headers.get("X-HIS-Delivery", ""), body["patient_id"], int(body["seq"])
            )
            time.sleep(hold)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass  # the worker hung up after its timeout

        def log_message(self, *args: object) -> None:
            pass

    recv.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recv.server.daemon_threads = True
    thread = threading.Thread(target=recv.server.serve_forever, daemon=True)
    thread.start()
    yield recv
    recv.server.shutdown()
    recv.server.server_close()


def light_mode(stack: WorklistStack) -> None:
    """As ``make run`` runs it: one worker process, two webhook lane threads, the relay."""
    env = {**stack.env, **SETTINGS, "CELERY_SKIP_CHECKS": "1"}
    stack.procs.append(
        start_light_worker(
            env, stack.base / "light-flaky.log", "--relay-lease-ttl", "2", webhook_threads=2
        )
    )


def processes_apart(stack: WorklistStack) -> None:
    """As production runs it: projections and the fan-out, deliveries, and the relay, each
    in processes of their own."""
    env = {**stack.env, **SETTINGS}
    stack.procs.append(
        start(
            [
                str(BIN / "celery"),
                "-A",
                "hisadmin",
                "worker",
                "-Q",
                "projections,celery",
                "--concurrency",
                "1",
                "--pool",
                "prefork",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "INFO",
            ],
            env,
            stack.base / "apart-worker.log",
        )
    )
    stack.procs.append(
        start(
            [
                str(BIN / "celery"),
                "-A",
                "hisadmin",
                "worker",
                "-Q",
                "webhooks",
                "-n",
                "webhooks@%h",
                "--concurrency",
                "2",
                "--pool",
                "prefork",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "INFO",
            ],
            env,
            stack.base / "apart-hooks.log",
        )
    )
    stack.relay("relay-flaky")


MODES: dict[str, Callable[[WorklistStack], None]] = {
    "light": light_mode,
    "apart": processes_apart,
}


def subscribe(store: DocumentStore, url: str) -> str:
    with mock.patch.dict(os.environ, RECEIVER_REACHABLE):  # named here as for the workers
        sub, _ = use_cases.subscribe(
            use_cases.Subscribe(url=url, events=EVENTS, secret=SECRET),
            store,
            actor=ADMIN,
            now=datetime.now(UTC) - timedelta(seconds=1),
        )
    return sub.id


def busy_patients(store: DocumentStore, prefix: str) -> dict[str, int]:
    """Patient → its last ``seq``; the patients' events interleaved and committed as fast as
    the store takes them, so several of each patient are in flight at once."""
    last: dict[str, int] = {}
    admissions: dict[str, str] = {}
    for i in range(PATIENTS):
        pid = data.register(store, f"{prefix}{i}", "Hook")
        last[pid] = 1
    for pid in last:
        admissions[pid] = data.admit(store, pid, "MED", "MED-1")
        last[pid] += 1
    for _ in range(ORDERS):
        for pid in last:
            data.place_order(store, pid, admissions[pid], department="MED")
            last[pid] += 1
    return last


def accepted_in_order(attempts: list[Attempt], last: int) -> list[int]:
    """The sequence numbers in the order of their first acceptance."""
    order: list[int] = []
    for a in attempts:
        if a.accepted and a.seq not in order:
            order.append(a.seq)
    return order


def none_before_its_predecessor(attempts: list[Attempt]) -> bool:
    """No event was attempted before every lower one had been accepted (or given up)."""
    done: set[int] = set()
    for a in attempts:
        if any(s not in done for s in range(1, a.seq)):
            return False
        if a.accepted:
            done.add(a.seq)
    return True


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_event_reaches_a_flaky_receiver_in_order_per_patient(stack, flaky, mode: str) -> None:
    store = stack.store()
    sub = subscribe(store, flaky.url)
    MODES[mode](stack)
    last = busy_patients(store, f"Flaky{mode.title()}")

    def all_delivered() -> bool:
        return all(trackers.read(store, sub, pid).delivered >= n for pid, n in last.items())

    wait_for(all_delivered, 45, interval=0.2, what="every event delivered")
    for pid, n in last.items():
        attempts = flaky.of(pid)
        assert accepted_in_order(attempts, n) == list(range(1, n + 1)), attempts
        assert none_before_its_predecessor(attempts), attempts
    refused = sum(not a.accepted for a in flaky.attempts)
    assert refused >= 5  # the receiver did refuse, and those were sent again
    assert [x for x in deadletters.all_letters(store) if x.subscription_id == sub] == []


@pytest.mark.parametrize("mode", sorted(MODES))
def test_an_event_refused_for_good_is_dead_lettered_and_the_patients_later_ones_follow(
    stack, flaky, mode: str
) -> None:
    store = stack.store()
    sub = subscribe(store, flaky.url)
    MODES[mode](stack)
    doomed_seq = 4
    # The doomed patient is registered first: its id is known before its fourth event.
    pid = data.register(store, f"Doomed{mode.title()}", "Hook")
    flaky.doomed.add((pid, doomed_seq))
    adm = data.admit(store, pid, "MED", "MED-1")
    for _ in range(6):
        data.place_order(store, pid, adm, department="MED")
    last = 8
    others = busy_patients(store, f"Bystander{mode.title()}")

    def all_done() -> bool:
        return all(
            trackers.read(store, sub, p).delivered >= n for p, n in {pid: last, **others}.items()
        )

    wait_for(all_done, 45, interval=0.2, what="every event delivered or dead-lettered")
    [letter] = [x for x in deadletters.all_letters(store) if x.subscription_id == sub]
    assert (letter.stream, letter.seq, letter.attempts) == (f"P_{pid}", doomed_seq, MAX_ATTEMPTS)
    attempts = flaky.of(pid)
    assert sum(a.seq == doomed_seq for a in attempts) == MAX_ATTEMPTS
    # Later events waited for the last attempt, then flowed in order.
    last_doomed = max(i for i, a in enumerate(attempts) if a.seq == doomed_seq)
    assert all(a.seq < doomed_seq for a in attempts[:last_doomed] if a.seq != doomed_seq)
    expected = [s for s in range(1, last + 1) if s != doomed_seq]
    assert accepted_in_order(attempts, last) == expected
    for p, n in others.items():
        assert accepted_in_order(flaky.of(p), n) == list(range(1, n + 1))
