"""The launcher's light mode with real processes: ONE Celery worker process (thread pool) runs
the projections, the default queue, the webhook deliveries on a lane of their own, and the
change-feed relay as a thread inside it. No ``run_relay`` process runs in these tests: what
reaches the worklists went through the worker's own relay thread."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable

import pytest

from cosmos_backend.leases import LEASE_PK, LeaseStore
from cosmos_backend.store import Cond, Query
from hisadmin.core import views_lag
from tests import worklist_data as data
from tests.integration.processes import start_light_worker, wait_for
from tests.integration.test_faults_worklists import admit_many, settled
from tests.integration.test_webhooks_delivery import (  # noqa: F401 - fixture
    RECEIVER_REACHABLE,
    receiver,
    subscribe,
)
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    stack_per_test,
    worklist_stack,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def light_worker(stack: WorklistStack, name: str, **kwargs: int) -> subprocess.Popen[bytes]:
    env = {**stack.env, "WEBHOOK_TIMEOUT": "10", "CELERY_SKIP_CHECKS": "1",
           **RECEIVER_REACHABLE}
    proc = start_light_worker(env, stack.base / f"{name}.log", "--relay-lease-ttl", "2",
                              **kwargs)
    stack.procs.append(proc)
    return proc


def while_up(proc: subprocess.Popen[bytes], stack: WorklistStack, name: str,
             predicate: Callable[[], object]) -> Callable[[], object]:
    """``predicate`` for wait_for, failing at once with the end of the worker's log if the
    worker exited meanwhile (rather than waiting out the bound for what it will not do)."""
    def check() -> object:
        if proc.poll() is not None:
            raise AssertionError(f"the worker exited ({proc.returncode}):\n"
                                 + stack.log(name)[-4000:])
        return predicate()
    return check


def relay_owner(stack: WorklistStack, name: str) -> str:
    found = re.search(r"relay (\S+) running inside the worker", stack.log(name))
    return found.group(1) if found else ""


def leases(stack: WorklistStack) -> LeaseStore:
    from hisadmin.core.store import open_embedded_leases

    return open_embedded_leases(stack.store_path)


def test_one_worker_process_projects_through_its_relay_thread_and_stops_cleanly(
        stack, settings) -> None:
    settings.CELERY_BROKER_URL = stack.redis.url  # where the relay publishes its lag
    store = stack.store()
    proc = light_worker(stack, "light")
    owner = wait_for(lambda: relay_owner(stack, "light"), 30, what="the relay thread")
    ids = admit_many(store, 3, "Light")
    wait_for(lambda: settled(store, ids), 30, interval=0.05, what="the worklists")
    lease_store = leases(stack)
    assert any(lease.owner == owner for lease in lease_store.all())  # it relayed them
    # The pages were marked projected by the worker (just after their views were written, so
    # a moment after they show): the relay's end-to-end lag is back to 0.
    wait_for(views_lag.projected_positions, 10, interval=0.05, what="the pages marked projected")
    wait_for(lambda: views_lag.lag_ms() == 0.0, 10, interval=0.05, what="the lag to clear")

    proc.send_signal(signal.SIGTERM)  # warm shutdown, as the launcher stops it
    assert proc.wait(30) == 0
    now = time.time()
    assert [lease.feed_range for lease in lease_store.all() if lease.held_by(owner, now)] == []
    presence = lease_store.store.query_all(LEASE_PK, Query(where=(Cond("owner", "=", owner),)))
    assert presence == []  # gone at once: a new relay gets every range without waiting
    assert "released range=" in stack.log("light")
    assert views_lag.lag_ms() is None  # the stopped relay took its figure back


def test_a_slow_webhook_receiver_never_holds_up_the_light_workers_projections(
        stack, receiver) -> None:  # noqa: F811
    store = stack.store()
    subscribe(store, receiver.url("/slow"))  # every answer takes 6 s
    # One thread for projections and the fan-out, one for deliveries: were deliveries on
    # the projections' thread, each patient's worklist rows would wait 6 s per delivery.
    light_worker(stack, "light-slow", threads=1, webhook_threads=1)
    wait_for(lambda: relay_owner(stack, "light-slow"), 30, what="the relay thread")
    first = data.register(store, "Unhurried", "Hook")
    wait_for(lambda: receiver.of("/slow", first), 20, interval=0.05, what="the slow delivery")
    ids = admit_many(store, 3, "Meanwhile")  # more deliveries queue behind the slow one
    wait_for(lambda: settled(store, [first, *ids]), 20, interval=0.05, what="the worklists")
    held = receiver.of("/slow", first)[0]
    assert time.monotonic() < held.at + 6  # settled while the receiver still holds its answer


def test_the_light_worker_rides_out_a_redis_outage_relay_and_consumers_alike(
        stack, receiver) -> None:  # noqa: F811
    """The relay thread backs off and keeps its checkpoints while the worker's consumers
    (the queues' and the webhook lane's) reconnect, in one process; after the outage
    everything committed meanwhile shows, and webhooks are delivered again."""
    store = stack.store()
    subscribe(store, receiver.url("/ok"))
    proc = light_worker(stack, "light-outage")
    wait_for(lambda: relay_owner(stack, "light-outage"), 30, what="the relay thread")
    first = admit_many(store, 1, "Steady")
    wait_for(lambda: settled(store, first), 20, interval=0.2, what="the stack to run")
    stack.redis.stop()
    ids = admit_many(store, 5, "Blackout")
    wait_for(lambda: stack.log("light-outage").count("broker unavailable") >= 2, 20,
             what="the relay thread to back off")
    stack.redis.start()
    wait_for(while_up(proc, stack, "light-outage", lambda: settled(store, ids)), 45,
             interval=0.3, what="catch-up after the outage")
    wait_for(while_up(proc, stack, "light-outage", lambda: receiver.of("/ok", ids[-1])), 30,
             interval=0.1, what="webhooks again")
    # The worker, its relay thread included, is still up (else its log's end says why).
    assert proc.poll() is None, stack.log("light-outage")[-4000:]
    assert "Error on restarting" not in stack.log("light-outage")


def test_a_webhook_in_flight_on_its_lane_when_redis_goes_away_does_not_end_the_worker(
        stack, receiver) -> None:  # noqa: F811
    """The webhook lane holds a delivery (unacknowledged, its receiver taking 6 s) when the
    broker goes away. Celery collects the lost connection (its transport released) before
    it stops the consumer's steps; the lane leaves that connection's channel alone. The
    worker stays up, and what was committed meanwhile is projected and delivered."""
    store = stack.store()
    subscribe(store, receiver.url("/slow"))  # every answer takes 6 s
    proc = light_worker(stack, "light-lane-outage")
    wait_for(lambda: relay_owner(stack, "light-lane-outage"), 30, what="the relay thread")
    first = data.register(store, "Inflight", "Hook")
    wait_for(lambda: receiver.of("/slow", first), 20, interval=0.05, what="the slow delivery")
    stack.redis.stop()  # the delivery is still waiting for its answer
    wait_for(lambda: "Connection to broker lost" in stack.log("light-lane-outage"), 20,
             what="the consumer to see the broker gone")
    ids = admit_many(store, 2, "Afterwards")
    time.sleep(1)
    stack.redis.start()
    wait_for(while_up(proc, stack, "light-lane-outage", lambda: settled(store, ids)), 45,
             interval=0.3, what="catch-up after the outage")
    wait_for(while_up(proc, stack, "light-lane-outage", lambda: receiver.of("/slow", ids[-1])),
             45, interval=0.1, what="webhooks again")
    assert proc.poll() is None, stack.log("light-lane-outage")[-3000:]
    assert "Unrecoverable error" not in stack.log("light-lane-outage")
