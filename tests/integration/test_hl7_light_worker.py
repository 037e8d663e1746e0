"""ADT out with real processes: the launcher's light worker (its relay thread, the
``hl7v2.fan_out`` on the default lane and ``hl7v2.deliver`` on the webhooks' lane) sends an
admission's A01 over MLLP to the asyncio engine, which validates it with hl7apy (v2.5.1,
STRICT) and answers AA; the message log then says accepted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hisadmin.core.actor import SYSTEM_ACTOR
from hl7v2.outbound import profile, use_cases
from hl7v2.persistence import store as hl7_store
from tests import worklist_data as data
from tests.hl7_engine import Engine, wait_for
from tests.integration.processes import start_light_worker
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    stack_per_test,
    worklist_stack,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
ENGINE_REACHABLE = {"HL7_ALLOWED_NETWORKS": "127.0.0.0/8"}


@pytest.fixture
def engine(stack: WorklistStack, monkeypatch) -> Iterator[Engine]:
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    with Engine() as running:
        yield running
        stack.stop_all()  # the worker's connection ends before the engine stops
        store = stack.store()
        for dest in hl7_store.all_destinations(store):  # none left for a later test
            hl7_store.remove(store, dest.id)


def test_the_light_worker_sends_an_admissions_a01_to_the_engine(stack, engine) -> None:
    store = stack.store()
    dest = use_cases.add_destination(use_cases.AddDestination(
        name="Engine", host="127.0.0.1", port=engine.port, events=["AdmissionStarted"]),
        store, actor=SYSTEM_ACTOR)
    env = {**stack.env, "CELERY_SKIP_CHECKS": "1", "HL7_ACK_TIMEOUT": "5", **ENGINE_REACHABLE}
    stack.procs.append(start_light_worker(env, stack.base / "light-hl7.log",
                                          "--relay-lease-ttl", "2"))
    patient_id = data.register(store, "Okafor", "Ada")
    admission_id = data.admit(store, patient_id, ward="CARD-A")

    wait_for(lambda: engine.triggers() == ["A01"], 25, what="the A01 at the engine")
    [a01] = engine.got  # parsed and validated by hl7apy (STRICT) as it arrived
    assert a01.pid.pid_5.to_er7() == "Okafor^Ada"
    assert a01.pv1.pv1_19.to_er7() == profile.visit_number(admission_id)
    assert a01.pv1.pv1_3.to_er7().split("^")[0] == "CARD-A"
    wait_for(lambda: [e.status for e in hl7_store.entries(store)] == ["accepted"], 10,
             what="the log's accepted entry")
    [entry] = hl7_store.entries(store)
    assert entry.destination_id == dest.id and entry.trigger == "A01" and entry.attempts == 1
    assert entry.control_id == a01.msh.msh_10.to_er7()
