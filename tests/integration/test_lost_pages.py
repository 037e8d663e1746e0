"""A worker killed whole — its main process and its pool with it, as the kernel's OOM killer
or a lost machine does — takes the page it was applying with it: Redis keeps the message
unacknowledged until the broker's visibility timeout (an hour), so no other worker gets it.
The relay notes every page it hands over as pending until a worker has committed its views,
and sends a page again once it is overdue and nothing waits in its queues. Real processes:
redis-server, Celery workers (prefork, and the light mode's thread pool with the relay inside),
and ``run_relay``. A follow-up page (a bed to cleaning after a discharge) lost after its
views were projected is sent again too, and so is a follow-up sent on alone from its page
whose worker was killed holding it."""

from __future__ import annotations

import subprocess

import pytest
import redis

from hisadmin.core import views_lag
from patients.persistence.beds import read_bed
from tests import worklist_data as data
from tests.integration.processes import (
    BIN,
    start,
    start_light_worker,
    start_relay,
    start_worker,
    stop,
    wait_for,
)
from tests.integration.test_faults_worklists import settled, wait_mid_page
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    kill,
    stack_per_test,
    worklist_stack,
)
from worklists.persistence import generations
from worklists.persistence.trackers import read_tracker

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.django_db]

REDRIVE = {"RELAY_REDRIVE_AFTER_S": "2"}
HOLD = {"WORKLISTS_FAILPOINTS": "after_rows=sleep:20"}  # the page's transaction held open


def _nothing_projected(store, pid: str) -> bool:
    gen = generations.pointer(store)["active"]
    return read_tracker(store, pid, gen).etag is None


def test_a_page_whose_worker_was_killed_whole_is_sent_again_by_the_relay(
        stack, settings) -> None:
    settings.CELERY_BROKER_URL = stack.redis.url  # to read the pending pages and the lag
    store = stack.store()
    env = {**stack.env, **REDRIVE}
    doomed = start_worker({**env, **HOLD}, stack.base / "doomed.log")
    stack.procs.append(doomed)
    relay = start_relay(env, stack.base / "redrive-relay.log", "--lease-ttl", "2",
                        "--idle-max", "0.2", "--owner", "redrive-relay")
    stack.procs.append(relay)
    pid = data.register(store, "Wholly", "Killed")
    wait_mid_page(stack, store, pid, "WH", timeout=30)
    kill(doomed)  # the whole process group: the message stays unacknowledged in Redis
    assert _nothing_projected(store, pid)
    assert views_lag.pending_pages()  # the relay still waits for it
    stack.procs.append(start_worker(env, stack.base / "fresh.log"))
    wait_for(lambda: settled(store, [pid]), 60, interval=0.2, what="the page sent again")
    assert "not handled: sent again" in stack.log("redrive-relay")
    wait_for(lambda: views_lag.lag_ms() == 0.0, 20, interval=0.1, what="the lag to clear")
    assert views_lag.pending_pages() == {}


@pytest.mark.parametrize("applies", ["1", "0"], ids=["relay-applies", "pool-applies"])
def test_the_light_worker_killed_whole_its_relay_too_leaves_the_page_to_the_next_one(
        stack, settings, applies) -> None:
    """``make run``'s mode: the relay is a thread of the worker and dies with it. The next
    worker's relay takes the ranges over once their leases lapse. Where the relay applies
    the page itself (the default), the dead one never checkpointed it: the next one reads it
    again and applies it (or, holding another range of the page first, finds it overdue and
    applies it as sent again; a second application changes nothing). Where a pool thread applied it
    (``RELAY_APPLIES_PAGES=0``), the page was checkpointed when sent: the next relay finds
    it still pending and sends it again."""
    settings.CELERY_BROKER_URL = stack.redis.url
    store = stack.store()
    env = {**stack.env, **REDRIVE, "CELERY_SKIP_CHECKS": "1", "RELAY_APPLIES_PAGES": applies}
    # With a pool thread applying it, the page is taken up only once the relay checkpointed
    # it (the checkpoint is a write of the views' file, which the held page would block).
    slow = {} if applies == "1" else {"WORKLISTS_FAILPOINTS": "page_message=sleep:1,"
                                      + HOLD["WORKLISTS_FAILPOINTS"]}
    doomed = start_light_worker({**env, **HOLD, **slow}, stack.base / "doomed-light.log",
                                "--relay-lease-ttl", "2")
    stack.procs.append(doomed)
    pid = data.register(store, "Whole", f"Lightworker-{applies}")  # not a duplicate
    wait_mid_page(stack, store, pid, "WH", timeout=30)
    kill(doomed)
    assert _nothing_projected(store, pid)
    assert views_lag.pending_pages()  # handed over, not projected: the lag counts it
    stack.procs.append(start_light_worker(env, stack.base / "next-light.log",
                                          "--relay-lease-ttl", "2"))
    wait_for(lambda: settled(store, [pid]), 60, interval=0.2, what="the page applied")
    if applies == "0":  # checkpointed when sent: only the re-drive brings it back
        assert "not handled: sent again" in stack.log("next-light")
    wait_for(lambda: views_lag.lag_ms() == 0.0, 20, interval=0.1, what="the lag to clear")
    # nothing pending, and its follow-ups' page handled too
    wait_for(lambda: views_lag.pending_pages() == {} and views_lag.unfinished_pages() == {},
             20, interval=0.1, what="nothing left unfinished")


def _queue_worker(stack: WorklistStack, env: dict[str, str], name: str, queue: str
                  ) -> subprocess.Popen[bytes]:
    """A prefork worker taking one queue only."""
    proc = start(
        [str(BIN / "celery"), "-A", "hisadmin", "worker", "-Q", queue, "--concurrency", "1",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO",
         "--pool", "prefork"], env, stack.base / f"{name}.log")
    stack.procs.append(proc)
    return proc


def _views_and_relay(stack: WorklistStack, env: dict[str, str], relay: str) -> None:
    """A worker for the projections alone, and a relay that re-drives after 2 s."""
    _queue_worker(stack, env, f"{relay}-views", "projections")
    stack.procs.append(start_relay(env, stack.base / f"{relay}.log", "--lease-ttl", "2",
                                   "--idle-max", "0.2", "--owner", relay))


def _sent_again_to_a_new_worker(stack: WorklistStack, env: dict[str, str], store,
                                bed: str, relay: str) -> None:
    """A new follow-ups' worker; the relay sends the lost follow-up again, the bed goes to
    cleaning, and nothing is left unfinished."""
    _queue_worker(stack, env, f"{relay}-follow-ups", "celery")
    wait_for(lambda: read_bed(store, "SURG-1", bed)["docContents"]["state"] == "cleaning",
             60, interval=0.2, what="the follow-up sent again")
    assert "not handled: sent again" in stack.log(relay)
    wait_for(lambda: views_lag.unfinished_pages() == {}, 20, interval=0.2,
             what="nothing left unfinished")


def test_a_lost_follow_up_page_is_sent_again_while_the_views_are_current(
        stack, settings) -> None:
    """The discharge's views are projected; its follow-up page (the bed to cleaning) is
    lost from the broker before a worker took it. The views are not behind — the lag says
    so — and the relay sends the follow-up page alone again: the bed goes to cleaning."""
    settings.CELERY_BROKER_URL = stack.redis.url
    store = stack.store()
    env = {**stack.env, **REDRIVE}
    _views_and_relay(stack, env, "fu-relay")
    pid = data.register(store, "Followup", "Lost")
    data.admit(store, pid, "SURG", "SURG-1", bed="S107")
    broker = redis.Redis(unix_socket_path=stack.redis.socket)
    wait_for(lambda: settled(store, [pid]), 30, interval=0.1, what="the admission's views")
    data.discharge(store, pid)
    wait_for(lambda: settled(store, [pid]), 30, interval=0.1, what="the discharge's views")
    wait_for(lambda: broker.llen("celery") > 0, 10, interval=0.05, what="its follow-ups queued")
    broker.delete("celery")  # lost: nobody took it, nobody will
    assert read_bed(store, "SURG-1", "S107")["docContents"]["state"] == "occupied"
    wait_for(lambda: views_lag.lag_ms() == 0.0, 20, interval=0.1, what="the views current")
    _sent_again_to_a_new_worker(stack, env, store, "S107", "fu-relay")


def test_a_follow_up_sent_on_alone_whose_worker_was_killed_whole_is_sent_again(
        stack, settings) -> None:
    """A discharge's follow-up (the bed to cleaning) fails in its page and goes on alone; the
    worker holding that message is SIGKILLed, process group and all, so Redis keeps it
    unacknowledged for an hour. The relay finds it unfinished and overdue and sends it again:
    the next worker sets the bed to cleaning."""
    settings.CELERY_BROKER_URL = stack.redis.url
    store = stack.store()
    env = {**stack.env, **REDRIVE}
    _views_and_relay(stack, env, "alone-relay")
    before = _queue_worker(stack, env, "alone-before", "celery")
    pid = data.register(store, "Alleinová", "Ødön")
    data.admit(store, pid, "SURG", "SURG-1", bed="S108")
    wait_for(lambda: settled(store, [pid]) and views_lag.unfinished_pages() == {}, 30,
             interval=0.1, what="the admission and its follow-ups")
    stop(before)  # warm: the next follow-ups' worker is doomed
    doomed = _queue_worker(
        stack, {**env, "WORKLISTS_FAILPOINTS": "follow_up_in_page=raise,follow_up=sleep:60"},
        "alone-doomed", "celery")
    data.discharge(store, pid)
    # Taken ("received") by the doomed worker. The queue may hold a copy again by then: the
    # relay sends the message again 2 s after it was sent on alone, the sleeping worker
    # notwithstanding, and a loaded machine may take longer than that to get here.
    wait_for(lambda: "sent on alone" in stack.log("alone-doomed")
             and "patients.follow_up[" in stack.log("alone-doomed"), 30, interval=0.1,
             what="the doomed worker holding the follow-up sent on alone")
    kill(doomed)
    assert read_bed(store, "SURG-1", "S108")["docContents"]["state"] == "occupied"
    assert [message[0] for kept in views_lag.unfinished_pages().values()
            for _, message in kept] == ["patients.follow_up"]
    _sent_again_to_a_new_worker(stack, env, store, "S108", "alone-relay")
