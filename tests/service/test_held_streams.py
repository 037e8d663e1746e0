"""A poison event never freezes a record silently: the stream is held and says so, reads
answer around the bad field, and a repair plus a replay releases it in order."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from cosmos_backend.outbox import is_event
from cosmos_backend.pytest_plugin import FeedDrainer
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import held_streams, keys
from hisadmin.core.actor import SYSTEM_ACTOR
from patients.domain.events import ORDER_PLACED
from patients.domain.orders import Order
from patients.persistence.documents import order_to_doc
from tests import worklist_data as data
from worklists.delivery.tasks import project_event as project_task
from worklists.persistence import generations
from worklists.persistence.deadletters import all_letters
from worklists.persistence.view_rows import view_pk
from worklists.read import queries

pytestmark = [pytest.mark.service, pytest.mark.django_db]


def place_raw_medication(store, patient_id: str, admission_id: str, start_at: str) -> str:
    """A scheduled medication order written as older data or another writer could have:
    the order document and its event, without the use case's checks."""
    from cosmos_backend.outbox import append_events

    order_id = str(uuid.uuid4())
    contents = {"orderId": order_id, "patientId": patient_id, "admissionId": admission_id,
                "kind": "medication", "status": "created", "urgency": "routine",
                "description": "Amoxicillin 500 mg PO Q8H", "departmentId": "MED",
                "wardId": "MED-1", "assigneeId": None, "assigneeName": None,
                "placedAt": datetime.now(UTC).isoformat(), "placedBy": "7",
                "medicationCode": "AMOX", "medicationName": "Amoxicillin", "dose": "500",
                "unit": "mg", "route": "PO", "frequency": "Q8H", "frequencyHours": 8,
                "startAt": start_at, "endAt": None, "asNeeded": False, "version": 1}
    uow = UnitOfWork(store)
    uow.add(order_to_doc(Order.from_record(contents)))
    append_events(uow, keys.patient(patient_id), [(ORDER_PLACED["medication"], contents)],
                  actor=SYSTEM_ACTOR.as_dict())
    uow.commit()
    return order_id


@pytest.fixture
def through_tasks(his_store):
    """Project every new event through the real task (eager: its retries, dead letters and
    holds included)."""
    drainer = FeedDrainer(his_store)

    def drain() -> int:
        return drainer(lambda doc: project_task.apply(
            args=[doc["partitionKey"], [int(doc["docContents"]["seq"])]]), only=is_event)

    return drain


@pytest.fixture
def poisoned(his_store, his_reference_data, through_tasks):
    held_streams.forget()
    pid = data.register(his_store, "Poison")
    adm = data.admit(his_store, pid, "MED", "MED-1")
    oid = place_raw_medication(his_store, pid, adm, "next tuesday")
    through_tasks()
    held_streams.forget()
    return {"pid": pid, "adm": adm, "oid": oid,
            "mrn": his_store.read(keys.patient(pid), "patient")["docContents"]["mrn"]}


def order_rows(store, dept: str = "MED") -> list[str]:
    gen = generations.active_generation(store)
    return [d["id"] for d in store.query_all(view_pk(store, "Orders", gen, dept), queries.Query())]


def test_it_holds_the_stream_of_an_event_that_fails_for_good(poisoned, his_store) -> None:
    held = held_streams.all_held(his_store)
    assert [(h.stream, h.seq, h.event_type) for h in held] == [
        (keys.patient(poisoned["pid"]), 3, "MedicationPrescribed")]
    assert "startAt" in held[0].reason and held[0].occurred_at
    assert [(letter.seq, letter.attempts > 1) for letter in all_letters(his_store)] == [(3, True)]


def test_later_events_of_a_held_stream_are_parked_in_order_not_projected(
        poisoned, his_store, through_tasks) -> None:
    lab = data.place_order(his_store, poisoned["pid"], poisoned["adm"], department="MED")
    through_tasks()
    assert lab not in order_rows(his_store)
    letters = all_letters(his_store)
    assert [letter.seq for letter in letters] == [3, 4]
    assert letters[1].reason.startswith("HeldStream") and letters[1].attempts == 0


def test_healthz_answers_503_naming_the_held_streams(poisoned, client) -> None:
    body = client.get("/healthz")
    assert body.status_code == 503
    assert body.json()["held_streams"]["count"] == 1
    assert body.json()["held_streams"]["streams"] == [keys.patient(poisoned["pid"])]


def test_the_worklist_page_marks_the_patients_rows_not_current(poisoned, his_user) -> None:
    client = Client()
    client.force_login(his_user("doc-held", "clinician"))
    html = client.get("/admin/worklists/admitted/?department=MED").content.decode()
    assert "POISON" in html and "Not current since" in html


def test_check_worklists_lists_the_held_stream_and_fails(poisoned, capsys) -> None:
    with pytest.raises(CommandError, match="held stream"):
        call_command("check_worklists")
    assert keys.patient(poisoned["pid"]) in capsys.readouterr().out


@pytest.mark.synthetic_events("made-up events: the held stream's bad field")
def test_reads_answer_and_name_the_bad_field(poisoned, his_api_client, his_user) -> None:
    api = his_api_client("clinician")
    pid, oid = poisoned["pid"], poisoned["oid"]
    mar = api.get(f"/api/v1/patients/{pid}/mar")
    assert mar.status_code == 200
    (order,) = mar.json()["orders"]
    assert order["slots"] == []
    assert order["data_errors"] == [{"field": "startAt",
                                     "message": "start time could not be read"}]
    one = api.get(f"/api/v1/patients/{pid}/orders/{oid}")
    assert one.status_code == 200 and one.json()["data_errors"][0]["field"] == "startAt"
    everything = api.get(f"/fhir/R4/Patient/{pid}/$everything")
    assert everything.status_code == 200 and b"start time could not be read" in everything.content
    page = Client()
    page.force_login(his_user("rn-held", "nurse"))
    for url in (f"/admin/patients/{pid}/", f"/admin/patients/{pid}/mar/",
                f"/admin/patients/{pid}/orders/{oid}/"):
        answer = page.get(url)
        assert answer.status_code == 200, url
        assert "tart time could not be read" in answer.content.decode(), url


def test_repair_then_replay_releases_the_stream_in_order(
        poisoned, his_store, through_tasks, client, capsys) -> None:
    lab = data.place_order(his_store, poisoned["pid"], poisoned["adm"], department="MED")
    through_tasks()
    with pytest.raises(CommandError, match="start_at"):
        call_command("repair_order", poisoned["mrn"], poisoned["oid"], "--field", "start_at",
                     "--value", "2026-11-25T08:00:00")  # no offset: refused
    call_command("repair_order", poisoned["mrn"], poisoned["oid"], "--field", "start_at",
                 "--value", "2026-11-25T08:00:00+00:00")
    through_tasks()  # the repair's own event is parked behind the held one
    assert [letter.seq for letter in all_letters(his_store)] == [3, 4, 5]
    call_command("replay_dead_letters")
    assert "released: events 3, 4, 5 projected in order" in capsys.readouterr().out
    held_streams.forget()
    assert held_streams.all_held(his_store) == [] and all_letters(his_store) == []
    assert {poisoned["oid"], lab} <= set(order_rows(his_store))
    call_command("check_worklists")
    assert client.get("/healthz").json()["held_streams"] == {"ok": True, "count": 0,
                                                             "streams": []}
    data.discharge(his_store, poisoned["pid"])  # later events flow again
    through_tasks()
    assert order_rows(his_store) == [] and all_letters(his_store) == []
