"""At least once across SIGKILL, with the store as the truth (and merges of duplicate records
killed between their steps, finished by the relay: the second test): 8 patients registered, admitted
and discharged (24 events) while the light worker (its relay thread and delivery sweeper
inside) is SIGKILLed three times and Redis is restarted empty once. Afterwards every event
reaches the HL7 engine (an asyncio MLLP server validating each message with hl7apy STRICT)
and the webhook receiver, each patient's messages in order, duplicates only with the same
MSH-10 / webhook-id, within a minute of the last restart — not after the broker's
visibility timeout (an hour)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hl7v2.outbound import use_cases as hl7_use_cases
from hl7v2.persistence import store as hl7_store
from patients.persistence import queries
from patients.persistence.repository import PatientRecords
from tests import worklist_data as data
from tests.hl7_engine import Engine, wait_for
from tests.integration.processes import ROOT, start_light_worker
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    kill,
    stack_per_test,
    worklist_stack,
)
from webhooks import use_cases as webhook_use_cases
from worklists.ops import maintenance

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.django_db]
EVENTS = ["PatientRegistered", "AdmissionStarted", "AdmissionEnded"]
TRIGGERS = {"A04": 1, "A01": 2, "A03": 3}
PATIENTS = 8
SETTINGS = {
    "HL7_ALLOWED_NETWORKS": "127.0.0.0/8", "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
    "HL7_ACK_TIMEOUT": "2", "WEBHOOK_TIMEOUT": "1", "WEBHOOK_BACKOFF_BASE": "0.2",
    "DELIVERY_SWEEP_SECONDS": "2", "DELIVERY_GRACE_SECONDS": "4", "CELERY_SKIP_CHECKS": "1",
}


class Receiver:
    def __init__(self) -> None:
        self.got: list[tuple[str, str, int]] = []  # (delivery id, patient, seq)
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                with receiver.lock:
                    receiver.got.append((self.headers.get("X-HIS-Delivery", ""),
                                         body["patient_id"], int(body["seq"])))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"


@pytest.fixture
def peers(stack: WorklistStack, monkeypatch) -> Iterator[tuple[Engine, Receiver]]:
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)
    receiver = Receiver()
    with Engine() as engine:
        yield engine, receiver
        stack.stop_all()
        store = stack.store()
        for dest in hl7_store.all_destinations(store):
            hl7_store.remove(store, dest.id)
    receiver.server.shutdown()


def restart_redis_empty(stack: WorklistStack) -> None:
    stack.redis.stop()
    for leftover in stack.base.glob("appendonly*"):
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    for leftover in stack.base.glob("*.rdb"):
        leftover.unlink()
    stack.redis.start()


def listen(store, engine: Engine, receiver: Receiver, events: list[str]):
    """The engine as an HL7 destination and the receiver as a webhook subscription for
    ``events``; returns the destination."""
    dest = hl7_use_cases.add_destination(hl7_use_cases.AddDestination(
        name="Engine", host="127.0.0.1", port=engine.port, events=events), store,
        actor=SYSTEM_ACTOR)
    webhook_use_cases.subscribe(webhook_use_cases.Subscribe(
        url=receiver.url, events=events, secret="chaos-secret-0123456789abcdef"), store,
        actor=SYSTEM_ACTOR)
    return dest


def test_every_message_arrives_after_three_sigkills_and_an_empty_redis(stack, peers) -> None:
    engine, receiver = peers
    store = stack.store()
    dest = listen(store, engine, receiver, EVENTS)
    env = {**stack.env, **SETTINGS}

    def worker(n: int):
        proc = start_light_worker(env, stack.base / f"chaos-{n}.log", "--relay-lease-ttl", "2")
        stack.procs.append(proc)
        return proc

    proc = worker(0)
    patients: list[str] = []
    for n in range(PATIENTS):
        patient_id = data.register(store, f"Chaos{n}", "Ann")
        patients.append(patient_id)
        data.admit(store, patient_id)
        data.discharge(store, patient_id)
        if n in (1, 3, 5):  # three SIGKILLs while messages are in flight
            time.sleep(1.5)
            kill(proc)
            if n == 3:
                restart_redis_empty(stack)  # what the broker held is gone
            proc = worker(n)
    started = time.time()

    def hl7_complete() -> bool:
        seen = {(m.pid.pid_3.to_er7().split("^")[0], m.msh.msh_9.msh_9_2.to_er7())
                for m in list(engine.got)}
        return len(seen) == PATIENTS * len(TRIGGERS)

    def webhooks_complete() -> bool:
        with receiver.lock:
            return len({(p, s) for _, p, s in receiver.got}) == PATIENTS * 3

    wait_for(lambda: hl7_complete() and webhooks_complete(), 90,
             what="every message at the engine and every webhook at the receiver")
    assert time.time() - started < 90
    # in order per patient (first arrival), duplicates only with the same control id
    by_mrn: dict[str, list[str]] = {}
    ids: dict[tuple[str, str], set[str]] = {}
    for message in list(engine.got):
        mrn = message.pid.pid_3.to_er7().split("^")[0]
        trigger = message.msh.msh_9.msh_9_2.to_er7()
        if trigger not in by_mrn.setdefault(mrn, []):
            by_mrn[mrn].append(trigger)
        ids.setdefault((mrn, trigger), set()).add(message.msh.msh_10.to_er7())
    assert all(order == ["A04", "A01", "A03"] for order in by_mrn.values()), by_mrn
    assert all(len(cids) == 1 for cids in ids.values())
    with receiver.lock:
        hooks = list(receiver.got)
    per_event: dict[tuple[str, int], set[str]] = {}
    for delivery, patient, seq in hooks:
        per_event.setdefault((patient, seq), set()).add(delivery)
    assert set(per_event) == {(p, s) for p in patients for s in (1, 2, 3)}
    assert all(len(d) == 1 for d in per_event.values())
    # the message log says so, per destination
    wait_for(lambda: {e.status for e in hl7_store.entries(store, limit=1000)
                      if e.destination_id == dest.id} == {"accepted"}, 30,
             what="every log entry accepted")


MERGE_EVENTS = ["PatientMerged"]
KILLED_AFTER = (1, 2, 3, 4, 0)  # lock, copy 1/3, 2/3, 3/3; the last pair is not killed


def _merge_and_die(stack: WorklistStack, survivor: str, retired: str, steps: int) -> int:
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("merge_and_die.py")),
                           survivor, retired, str(steps)], env=stack.env, cwd=ROOT,
                          capture_output=True, timeout=60)
    return done.returncode


def test_merges_killed_between_steps_under_load_finish_and_reach_every_feed(
        stack, peers) -> None:
    """Five duplicates merged while patients come and go, four merges' processes SIGKILLed
    between two steps and the worker once: the relay finishes every merge (the retired
    record merged, its stay the survivor's in the views), the engine gets an A40 per merge
    naming the retired MRN in MRG and the receiver a PatientMerged webhook."""
    engine, receiver = peers
    store = stack.store()
    listen(store, engine, receiver, MERGE_EVENTS)
    env = {**stack.env, **SETTINGS}
    proc = start_light_worker(env, stack.base / "merges-0.log", "--relay-lease-ttl", "2")
    stack.procs.append(proc)
    pairs, killed = [], 0
    for n, steps in enumerate(KILLED_AFTER):
        survivor = data.register(store, f"Merged{n}", "Ann")
        retired = data.register(store, f"Unknown{n}", "Female")
        admission = data.admit(store, retired, bed=f"A0{n + 1}")
        for what in ("Chest X-ray", "CT head"):
            data.place_order(store, retired, admission, description=what)
        other = data.register(store, f"Load{n}", "Ann")  # the ward's other work goes on
        data.admit(store, other)
        code = _merge_and_die(stack, survivor, retired, steps)
        # Killed after its step, or finished first: the relay met the merge's first event and
        # ran the saga's steps beside it, so fewer were left to this process than it was to
        # die after. Either way the relay must finish what is left.
        assert code in ((-signal.SIGKILL, 0) if steps else (0,)), code
        killed += code == -signal.SIGKILL
        data.discharge(store, other)
        pairs.append((survivor, retired))
        if n == 2:
            kill(proc)
            proc = start_light_worker(env, stack.base / "merges-1.log", "--relay-lease-ttl",
                                      "2")
            stack.procs.append(proc)

    assert killed >= 1  # dying right after the lock is never overtaken

    def merged() -> bool:
        return all((queries.patient(store, r).get("mergedInto") or {}).get("state")
                   == "merged" for _, r in pairs)

    wait_for(merged, 120, what="every merge finished by the relay")
    mrns = {queries.patient(store, r)["mrn"]: queries.patient(store, s)["mrn"]
            for s, r in pairs}

    def fed() -> bool:
        a40 = {m.adt_a39_patient.mrg.mrg_1.to_er7().split("^")[0]:
               m.adt_a39_patient.pid.pid_3.to_er7().split("^")[0]
               for m in list(engine.got) if m.msh.msh_9.msh_9_2.to_er7() == "A40"}
        with receiver.lock:
            hooks = {p for _, p, _ in receiver.got}
        return a40 == mrns and hooks == {r for _, r in pairs}

    wait_for(fed, 90, what="an A40 and a webhook per merge")
    for survivor, _ in pairs:  # the stay and its two orders are the survivor's
        record = PatientRecords(UnitOfWork(store)).load(survivor)
        assert record.admission is not None and len(record.active_orders()) == 2
    ids = [p for pair in pairs for p in pair]
    try:
        wait_for(lambda: maintenance.check(store, ids).drifted == {}, 60,
                 what="the views to follow every merge")
    except AssertionError:
        raise AssertionError(maintenance.check(store, ids).drifted) from None
