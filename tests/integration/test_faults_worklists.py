"""Crashes, outages and contention with real processes: redis-server, Celery worker, relays.

Each test starts the processes it needs on the session's store and broker, writes clinical
records in this process, and waits (bounded) until every touched patient's views equal what
its record says, with the tracker at the stream's sequence: nothing lost, nothing doubled.
"""

from __future__ import annotations

import re
import sqlite3
import time

import psutil
import pytest

from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import append_events
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.store import views_path
from tests import worklist_data as data
from tests.integration.processes import wait_for
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    kill,
    stack_per_test,
    worklist_stack,
)
from worklists.ops.maintenance import check_patient
from worklists.persistence import generations
from worklists.persistence.deadletters import all_letters
from worklists.persistence.trackers import read_tracker

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.django_db]


def settled(store, patient_ids: list[str]) -> bool:
    gen = generations.pointer(store)["active"]
    for pid in patient_ids:
        stream = store.read(f"P_{pid}", "stream")["docContents"]["seq"]
        if read_tracker(store, pid, gen).state.seq != stream or check_patient(store, gen, pid):
            return False
    return True


def admit_many(store, n: int, prefix: str) -> list[str]:
    ids = []
    for i in range(n):
        pid = data.register(store, f"{prefix}{i:03d}", "Test")
        adm = data.admit(store, pid, "MED", "MED-1")
        data.place_order(store, pid, adm, department="MED")
        ids.append(pid)
    return ids


def test_it_loses_and_doubles_nothing_when_the_relay_is_killed_mid_batch(stack) -> None:
    store = stack.store()
    stack.worker()
    relay = stack.relay("relay-a", "--page-size", "5")
    ids = admit_many(store, 20, "Crash")  # 60 events, relayed five documents a page
    wait_for(lambda: settled(store, ids[:1]), 20, interval=0.02, what="the relay to be busy")
    kill(relay)  # mid-way through the 60 events: some relayed, some checkpointed, some not
    more = admit_many(store, 5, "After")
    stack.relay("relay-b")  # takes over once relay-a's leases expire (2 s)
    wait_for(lambda: settled(store, ids + more), 40, interval=0.3, what="views to settle")
    assert all_letters(store) == []


def _views_write_lock_held(views_file: str) -> bool:
    """Someone holds the views file's write lock (an open write transaction)."""
    conn = sqlite3.connect(views_file, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc):
            raise
        return True
    finally:
        conn.close()


def wait_mid_page(stack: WorklistStack, store, pid: str, initials: str,
                  timeout: float = 20) -> None:
    """Wait until a worker holds the page of ``pid``'s registration open: its rows written,
    its trackers not, all in one open transaction of the views (held over a failpoint's
    sleep, not the moment a checkpoint takes), nothing of it visible yet."""
    gen = generations.pointer(store)["active"]
    views_file = views_path(str(stack.store_path))

    def held() -> bool:
        if not _views_write_lock_held(views_file):
            return False
        time.sleep(0.3)
        return (_views_write_lock_held(views_file)
                and store.try_read(f"V_Names_g{gen}_{initials}", pid) is None)

    wait_for(held, timeout, interval=0.02, what="the page to be mid-way")


def test_it_redelivers_a_task_whose_worker_process_was_killed_and_applies_it_once(stack) -> None:
    store = stack.store()
    worker = stack.worker("slow-worker", WORKLISTS_FAILPOINTS="after_rows=sleep:2")
    stack.relay()
    pid = data.register(store, "Killed", "Midtask")
    gen = generations.pointer(store)["active"]
    wait_mid_page(stack, store, pid, "KI")
    children = psutil.Process(worker.pid).children(recursive=True)
    assert children, "prefork pool child not found"
    for child in children:
        child.kill()  # the pool process dies holding the unacknowledged task
    # SQLite undid the dead process's open transaction: no row without its tracker.
    assert store.try_read(f"V_Names_g{gen}_KI", pid) is None
    assert read_tracker(store, pid, gen).etag is None
    wait_for(lambda: settled(store, [pid]), 30, interval=0.2, what="redelivery")
    assert read_tracker(store, pid, gen).state.seq == 1
    assert "WorkerLostError" in stack.log("slow-worker") or "Process" in stack.log("slow-worker")


def test_it_backs_off_while_redis_is_down_and_catches_up_after(stack) -> None:
    store = stack.store()
    stack.worker()
    stack.relay("relay-r")
    first = admit_many(store, 1, "Before")
    wait_for(lambda: settled(store, first), 20, interval=0.2, what="the stack to run")
    stack.redis.stop()
    ids = admit_many(store, 5, "Outage")
    wait_for(lambda: stack.log("relay-r").count("broker unavailable") >= 3, 20,
             what="the relay to back off")
    waits = [float(w) for w in re.findall(r"retrying in ([\d.]+)s", stack.log("relay-r"))]
    assert waits[:3] == sorted(waits[:3]) and waits[2] > waits[0]  # exponential
    stack.redis.start()
    wait_for(lambda: settled(store, ids), 45, interval=0.3, what="catch-up after the outage")


def _holdings(log: str) -> list[tuple[float, str, str]]:
    """(time, event, range) of one relay's lease log lines."""
    out = []
    for line in log.splitlines():
        m = re.match(r"(\S+ \S+) INFO worklists.delivery.relay (acquired|released) range=(\S+)", line)
        if m is None:
            m = re.match(r"(\S+ \S+) WARNING worklists.delivery.relay (lost) range=(\S+)", line)
        if m:
            stamp = time.mktime(time.strptime(m.group(1)[:19], "%Y-%m-%d %H:%M:%S"))
            out.append((stamp + int(m.group(1)[20:23]) / 1000, m.group(2), m.group(3)))
    return out


def _intervals(log: str, end: float) -> dict[str, list[tuple[float, float]]]:
    held: dict[str, float] = {}
    spans: dict[str, list[tuple[float, float]]] = {}
    for stamp, what, feed_range in _holdings(log):
        if what == "acquired":
            held[feed_range] = stamp
        elif feed_range in held:
            spans.setdefault(feed_range, []).append((held.pop(feed_range), stamp))
    for feed_range, since in held.items():
        spans.setdefault(feed_range, []).append((since, end))
    return spans


def test_it_never_lets_two_relays_hold_one_feed_range_at_once(stack) -> None:
    store = stack.store()
    stack.worker()
    a = stack.relay("pair-a")
    stack.relay("pair-b")
    wait_for(lambda: "acquired" in stack.log("pair-a") and "acquired" in stack.log("pair-b"),
             15, what="both relays to hold ranges")
    ids = admit_many(store, 10, "Pair")
    wait_for(lambda: settled(store, ids), 30, interval=0.3, what="views with two relays")
    kill(a)
    killed_at = time.time()
    more = admit_many(store, 3, "Solo")
    wait_for(lambda: settled(store, more), 30, interval=0.3, what="take-over")
    end = time.time()
    spans_a = _intervals(stack.log("pair-a"), killed_at)
    spans_b = _intervals(stack.log("pair-b"), end)
    assert spans_a and spans_b
    for feed_range, mine in spans_a.items():
        for a0, a1 in mine:
            for b0, b1 in spans_b.get(feed_range, []):
                assert a1 <= b0 or b1 <= a0, f"{feed_range} held by both relays"


@pytest.mark.synthetic_events("made-up events: a poison event no projection knows")
def test_it_dead_letters_a_poison_event_while_everything_else_flows(stack) -> None:
    store = stack.store()
    stack.worker()
    stack.relay()
    poison = data.register(store, "Poison", "Pill")
    uow = UnitOfWork(store)
    doc = uow.get(f"P_{poison}", "patient")
    uow.update(wrap(doc_id="patient", pk=f"P_{poison}", doc_type="Patient",
                    contents={**doc["docContents"], "familyName": ""}) | {"_etag": doc["_etag"]})
    append_events(uow, f"P_{poison}", [("SomethingUnknown", {})], actor=SYSTEM_ACTOR.as_dict())
    uow.commit()
    healthy = admit_many(store, 3, "Healthy")
    wait_for(lambda: settled(store, healthy), 30, interval=0.2, what="healthy patients")
    wait_for(lambda: any(d.stream == f"P_{poison}" for d in all_letters(store)), 20,
             what="the dead letter")
    letter = next(d for d in all_letters(store) if d.stream == f"P_{poison}")
    assert letter.event_type == "SomethingUnknown"
    assert letter.attempts == 3
    status = stack.manage("relay_status")
    assert b"dead letters: " in status.stdout and status.returncode == 0
    # Mend the record, replay: the patient's views catch up and the letter is gone.
    uow = UnitOfWork(store)
    doc = uow.get(f"P_{poison}", "patient")
    doc["docContents"]["familyName"] = "Mended"
    uow.update(doc)
    uow.commit()
    assert stack.manage("replay_dead_letters").returncode == 0
    wait_for(lambda: settled(store, [poison]), 20, interval=0.2, what="the replayed event")
    assert not [d for d in all_letters(store) if d.stream == f"P_{poison}"]
