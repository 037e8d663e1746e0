"""A poison event with the real processes: Redis, the Celery worker and the relay, in the
light mode of ``make run`` (one worker process, the relay a thread inside it) and with the
relay and the worker apart.

A scheduled medication whose stored start cannot be read fails its projection for good: the
event is dead-lettered with its error and the patient's stream held; the patient's later
order and transfer wait, parked, while ``/healthz`` and ``check_worklists`` name the stream.
An operator's ``repair_order`` then ``replay_dead_letters`` release it in order, and the
patient's next event flows through the worker again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from django.test import Client

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import held_streams, keys
from hisadmin.core import store as handles
from hisadmin.core.actor import Actor
from patients import use_cases
from tests import worklist_data as data
from tests.integration.processes import start_light_worker, wait_for
from tests.integration.test_faults_worklists import settled
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    stack_per_test,
    worklist_stack,
)
from tests.service.test_held_streams import place_raw_medication
from worklists.persistence import generations
from worklists.persistence.deadletters import DeadLetter, all_letters
from worklists.persistence.view_rows import bucket_docs, row_id_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

DOCTOR = Actor(id="8", username="drheld", display_name="Dr Held", roles=("clinician",))
CLERK = Actor(id="9", username="clerkheld", display_name="Clerk Held", roles=("clerk",))
QUICK = {"PROJECTION_MAX_RETRIES": "1"}  # two attempts, 0.1 s apart, then dead-lettered
WAIT = 20  # seconds, every bounded wait (scaled by TEST_WAIT_SCALE on a busy machine)


def lab_order(store: DocumentStore, patient_id: str, test: str = "CBC") -> str:
    return use_cases.place_order(use_cases.PlaceOrder(patient_id=patient_id, kind="lab",
                                                      test_code=test),
                                 UnitOfWork(store), actor=DOCTOR).order_id


def light_stack(stack: WorklistStack, name: str) -> None:
    """``make run``'s default: one worker process, the relay a thread inside it."""
    env = {**stack.env, **QUICK, "CELERY_SKIP_CHECKS": "1"}
    stack.procs.append(start_light_worker(env, stack.base / f"{name}.log",
                                          "--relay-lease-ttl", "2"))
    wait_for(lambda: "running inside the worker" in stack.log(name), WAIT,
             what="the worker's relay thread")


def separate_stack(stack: WorklistStack, name: str) -> None:
    """The processes apart: a prefork worker and ``manage.py run_relay``."""
    stack.worker(f"{name}-worker", **QUICK)
    stack.relay(f"{name}-relay")


MODES: dict[str, Callable[[WorklistStack, str], None]] = {
    "light": light_stack, "separate": separate_stack}


@pytest.fixture
def healthz(stack: WorklistStack, settings: object) -> Iterator[Callable[[], object]]:
    """``GET /healthz`` in this process, against the stack's store and broker."""
    cfg = dict(settings.DOCUMENT_STORE)  # type: ignore[attr-defined]
    cfg.update(backend="embedded", path=str(stack.store_path))
    settings.DOCUMENT_STORE = cfg  # type: ignore[attr-defined]
    settings.CELERY_BROKER_URL = stack.redis.url  # type: ignore[attr-defined]
    handles.reset_handles()
    client = Client()
    yield lambda: client.get("/healthz")
    handles.reset_handles()


def rows(store: DocumentStore, view: str, bucket: str = "MED") -> dict[str, dict]:
    """A view bucket's rows in the active generation, by id."""
    gen = generations.active_generation(store)
    return {row_id_of(d): d["docContents"] for d in bucket_docs(store, gen, view, bucket)}


def letters_of(store: DocumentStore, stream: str) -> dict[int, DeadLetter]:
    return {letter.seq: letter for letter in all_letters(store) if letter.stream == stream}


def head(store: DocumentStore, stream: str) -> int:
    return int(store.read(stream, "stream")["docContents"]["seq"])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_poison_event_holds_the_stream_until_repaired_and_replayed(
        stack, healthz, mode: str) -> None:  # noqa: F811
    store = stack.store()
    # Streams an earlier test of the session left held (say, a webhook fan-out's): not ours.
    others = {h.stream for h in held_streams.all_held(store)}
    MODES[mode](stack, f"held-{mode}")
    family = f"Held{mode.capitalize()}"
    pid = data.register(store, family)
    adm = data.admit(store, pid, "MED", "MED-1")
    stream = keys.patient(pid)
    mrn = store.read(stream, "patient")["docContents"]["mrn"]
    poison = place_raw_medication(store, pid, adm, "next tuesday")  # event 3
    lab = lab_order(store, pid)  # event 4
    use_cases.transfer_patient(use_cases.TransferPatient(pid, "MED-2"), UnitOfWork(store),
                               actor=CLERK)  # event 5

    # Held at the poison event; the order and the transfer after it parked, in order.
    # (Events 4 and 5 may reach a task before the hold and fail on their own: the
    # earliest failure wins the marker.)
    def held_at_the_poison() -> bool:
        marker = held_streams.read(store, stream)
        return (marker is not None and marker.seq == 3
                and set(letters_of(store, stream)) == {3, 4, 5})

    wait_for(held_at_the_poison, WAIT, what="the stream held at 3, events 4 and 5 parked")
    marker = held_streams.read(store, stream)
    assert marker.event_type == "MedicationPrescribed"
    assert "UnreadableCourse" in marker.reason and "startAt" in marker.reason
    letters = letters_of(store, stream)
    assert letters[3].attempts == 2 and "UnreadableCourse" in letters[3].reason
    assert [h.stream for h in held_streams.all_held(store, held_streams.PROJECTIONS)
            if h.stream not in others] == [stream]
    answer = healthz()
    assert answer.status_code == 503
    assert answer.json()["held_streams"] == {"ok": False, "count": 1 + len(others),
                                             "streams": sorted({stream, *others})}
    check = stack.manage("check_worklists")
    assert check.returncode != 0
    assert f"{stream}: held at event 3 (MedicationPrescribed)" in check.stdout.decode()
    assert lab not in rows(store, "Orders")
    assert rows(store, "Admitted")[pid]["wardId"] == "MED-1"  # as of event 2

    # The operator's repair: the order through its use case, then the replay.
    repaired = stack.manage("repair_order", mrn, poison, "--field", "start_at",
                            "--value", "2026-11-25T08:00:00+00:00")
    assert repaired.returncode == 0, repaired.stderr.decode()
    # At once, as an operator would: the repair's own event (6) is parked behind the held
    # one and replayed with it, or reaches the worker after the release and is projected
    # there; either way after events 3 to 5, and nothing is left behind.
    replayed = stack.manage("replay_dead_letters")
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert re.search(rf"{stream}: released: events 3, 4, 5(, 6)? projected in order",
                     replayed.stdout.decode()), replayed.stdout.decode()
    assert held_streams.read(store, stream) is None
    said = stack.manage("security_events", "--action", "dead letters replayed")
    assert said.returncode == 0 and "operator" in said.stdout.decode() and \
        stream in said.stdout.decode(), said.stdout.decode()  # attributed, naming the stream
    wait_for(lambda: settled(store, [pid]) and letters_of(store, stream) == {}, WAIT,
             interval=0.1, what="the repair's event projected")
    assert {poison, lab} <= set(rows(store, "Orders"))
    admitted = {k: r for k, r in rows(store, "Admitted").items() if r["patientId"] == pid}
    assert [r["wardId"] for r in admitted.values()] == ["MED-2"]
    check = stack.manage("check_worklists")
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()
    assert "0 held stream(s)" in check.stdout.decode()
    if not others:
        answer = wait_for(lambda: next((a for a in [healthz()] if a.status_code == 200), None),
                          WAIT, interval=0.2, what="/healthz ok")
        assert answer.json()["held_streams"] == {"ok": True, "count": 0, "streams": []}
    assert stream not in healthz().json()["held_streams"]["streams"]

    # The patient's next event flows through the worker again.
    later = lab_order(store, pid, "CRP")  # event 7
    wait_for(lambda: later in rows(store, "Orders") and settled(store, [pid]), WAIT,
             interval=0.1, what="the next order in Active Orders")
    assert head(store, stream) == 7
    assert letters_of(store, stream) == {} and held_streams.read(store, stream) is None
