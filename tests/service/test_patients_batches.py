"""Each command writes its aggregates, the stream and its events in ONE batch, or nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal

import pytest

from cosmos_backend.store import BatchOp, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.persistence import beds

pytestmark = [pytest.mark.service, pytest.mark.django_db]
ACTOR = Actor(id="7", username="tester", display_name="Test User", roles=("clerk",))


@pytest.fixture
def record(his_store) -> dict[str, str]:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))

    def uow() -> UnitOfWork:
        return UnitOfWork(his_store)

    a = use_cases.register_patient(use_cases.RegisterPatient("Ann", "Admitted", date(1970, 1, 1)), uow(),
                           actor=ACTOR).patient_id
    b = use_cases.register_patient(use_cases.RegisterPatient("Bo", "Waiting", date(1971, 1, 1)), uow(),
                           actor=ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(a, "MED", "MED-1", "Pneumonia", bed="M101"), uow(),
                    actor=ACTOR)
    # the allergies asked before prescribing (else a medication order is allergy-status-unknown)
    allergy = use_cases.add_allergy(use_cases.AddAllergy(a, "Latex", "Hives", "mild"), uow(),
                                   actor=ACTOR)
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=a, kind="medication", medication_code="PARA", dose=Decimal("1"), unit="g",
        route="PO", frequency="Q8H"), uow(), actor=ACTOR)
    # first dose now: a dose time at its start, so a dose given now closes it
    ready = use_cases.place_order(use_cases.PlaceOrder(patient_id=a, kind="medication",
                                                     medication_code="PARA", dose=Decimal("1"),
                                                     unit="g", route="PO", frequency="Q8H",
                                                     first_dose="now",
                                                     overrides={"duplicate-order":
                                                                "second course, for the test"}),
                                 uow(), actor=ACTOR)
    use_cases.progress_order(use_cases.ProgressOrder(a, ready.order_id, "ready"), uow(),
                            actor=ACTOR)
    return {"a": a, "b": b, "order": order.order_id, "ready": ready.order_id,
            "allergy": allergy}


Command = Callable[[UnitOfWork, dict[str, str]], str]  # returns the patient it changed
# name → (run it, the docTypes written besides Stream, the event types in sequence order)
COMMANDS: dict[str, tuple[Command, list[str], list[str]]] = {
    "update_demographics": (lambda u, r: use_cases.update_demographics(
        use_cases.UpdateDemographics(r["a"], "Ann", "Admitted-Smith", date(1970, 1, 1),
                                    "female"), u, actor=ACTOR) or r["a"],
        ["Patient"], ["PatientDemographicsUpdated"]),
    "add_allergy": (lambda u, r: use_cases.add_allergy(
        use_cases.AddAllergy(r["a"], "Penicillin", "Rash", "severe"), u, actor=ACTOR) and r["a"],
        ["Patient"], ["AllergyAdded"]),
    "remove_allergy": (lambda u, r: use_cases.remove_allergy(
        use_cases.RemoveAllergy(r["a"], r["allergy"], reason="resolved"), u, actor=ACTOR) or r["a"],
        ["Patient"], ["AllergyRemoved"]),
    "admit": (lambda u, r: use_cases.admit_patient(
        use_cases.AdmitPatient(r["b"], "CARD", "CARD-A", "Chest pain", bed="A01"), u,
        actor=ACTOR) and r["b"], ["Admission"], ["AdmissionStarted"]),
    "transfer": (lambda u, r: use_cases.transfer_patient(
        use_cases.TransferPatient(r["a"], "MED-2", "M205"), u, actor=ACTOR) or r["a"],
        ["Admission"], ["PatientTransferred"]),
    "place_order": (lambda u, r: use_cases.place_order(
        use_cases.PlaceOrder(patient_id=r["a"], kind="imaging", modality="CT",
                            body_part="CHEST", urgency="stat"), u, actor=ACTOR) and r["a"],
        ["Order"], ["ImagingExamRequested"]),
    "progress_order": (lambda u, r: use_cases.progress_order(
        use_cases.ProgressOrder(r["a"], r["order"], "start"), u, actor=ACTOR) and r["a"],
        ["Order"], ["OrderStarted"]),
    "assign_order": (lambda u, r: use_cases.assign_order(
        use_cases.AssignOrder(r["a"], r["order"], "9", "Nina Nurse"), u, actor=ACTOR)
        and r["a"], ["Order"], ["OrderAssigned"]),
    "administer": (lambda u, r: use_cases.administer(
        use_cases.Administer(r["a"], r["ready"], Decimal("1"), "g"), u, actor=ACTOR)
        and r["a"], ["Order"], ["MedicationAdministered", "OrderStarted"]),
    "discharge": (lambda u, r: use_cases.discharge_patient(
        use_cases.DischargePatient(r["a"], "home"), u, actor=ACTOR) and r["a"],
        ["Admission", "Order", "Order"], ["OrderCancelled", "OrderCancelled",
                                          "AdmissionEnded"]),
}


def snapshot(store, pid: str) -> dict[str, str]:
    return {d["id"]: d["_etag"] for d in store.query_all(keys.patient(pid), Query())}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_it_writes_aggregate_stream_and_events_in_one_batch(his_store, record, name: str,
                                                            monkeypatch) -> None:
    run, aggregates, event_types = COMMANDS[name]
    pid = record["b"] if name == "admit" else record["a"]
    before = snapshot(his_store, pid)
    batches: list[int] = []
    real = his_store.execute_batch
    monkeypatch.setattr(his_store, "execute_batch",
                        lambda pk, ops: batches.append(len(ops)) or real(pk, ops))
    run(UnitOfWork(his_store), record)
    assert len(batches) == 1, "one command, one batch"
    docs = his_store.query_all(keys.patient(pid), Query())
    written = [d for d in docs if before.get(d["id"]) != d["_etag"]]
    assert batches[0] == len(written)
    assert sorted(d["docType"] for d in written if d["docType"] != "Event") == \
        sorted([*aggregates, "Stream"])
    events = sorted((d for d in written if d["docType"] == "Event"), key=lambda d: d["id"])
    assert [e["docContents"]["type"] for e in events] == event_types
    stream = next(d for d in docs if d["id"] == "stream")["docContents"]
    assert [e["docContents"]["seq"] for e in events][-1] == stream["seq"]
    for event in events:  # the audit trail: who and when, on every event
        assert event["docContents"]["actor"]["username"] == "tester"
        assert event["docContents"]["occurredAt"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_it_writes_nothing_when_the_batch_fails(his_store, record, name: str,
                                                monkeypatch) -> None:
    run, _, _ = COMMANDS[name]
    pid = record["b"] if name == "admit" else record["a"]
    before = snapshot(his_store, pid)
    real = his_store.execute_batch
    # The last operation fails (the id does not exist): Cosmos then applies none of them.
    monkeypatch.setattr(his_store, "execute_batch",
                        lambda pk, ops: real(pk, [*ops[:-1], BatchOp.delete("no-such-doc")]))
    with pytest.raises(StaleWrite):
        run(UnitOfWork(his_store), record)
    assert snapshot(his_store, pid) == before
    # Compensation: a bed reserved for the failed command is free again.
    for ward, bed in (("CARD-A", "A01"), ("MED-2", "M205")):
        assert beds.read_bed(his_store, ward, bed) is None
    assert beds.is_occupied(his_store, ward_id="MED-1", bed="M101")  # untouched


def test_it_refuses_a_second_patient_in_an_occupied_bed(his_store, record) -> None:
    from patients.domain.errors import BedOccupied

    before = his_store.count()
    with pytest.raises(BedOccupied):
        use_cases.admit_patient(use_cases.AdmitPatient(record["b"], "MED", "MED-1", "x",
                                                     bed="M101"), UnitOfWork(his_store),
                               actor=ACTOR)
    assert his_store.count() == before


# What happens to a bed after a discharge or a transfer: tests/service/test_beds.py
