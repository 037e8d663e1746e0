"""Concurrency on the clinical record against the real embedded store (threads, one file)."""

from __future__ import annotations

import threading
import time
from datetime import date

import pytest

from cosmos_backend.store import Cond, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.domain.errors import DuplicateMrn, MrnBeingRegistered
from patients.persistence import mrn

pytestmark = [pytest.mark.service, pytest.mark.django_db]


def register(store, mrn_value: str = "", name: str = "Doe"):
    return use_cases.register_patient(use_cases.RegisterPatient(
        given_name="Jo", family_name=name, birth_date=date(1980, 1, 1), mrn=mrn_value),
        UnitOfWork(store), actor=SYSTEM_ACTOR)


def test_it_gives_the_second_of_two_writers_a_clear_conflict(his_store) -> None:
    pid = register(his_store).patient_id
    first, second = UnitOfWork(his_store), UnitOfWork(his_store)
    first.get(keys.patient(pid), "patient")
    second.get(keys.patient(pid), "patient")  # both read the same version
    use_cases.add_allergy(use_cases.AddAllergy(pid, "Penicillin", "Rash", "severe"), first,
                         actor=SYSTEM_ACTOR)
    with pytest.raises(StaleWrite):
        use_cases.add_allergy(use_cases.AddAllergy(pid, "Latex", "Hives", "mild"), second,
                             actor=SYSTEM_ACTOR)
    allergies = his_store.read(keys.patient(pid), "patient")["docContents"]["allergies"]
    assert [a["substance"] for a in allergies] == ["Penicillin"]  # nothing lost, nothing merged


def test_it_registers_one_mrn_exactly_once_under_20_parallel_attempts(his_store) -> None:
    outcomes: list[str] = []
    barrier = threading.Barrier(20)
    before = his_store.count()

    def attempt(n: int) -> None:
        barrier.wait()
        try:
            register(his_store, "RACE001", name=f"Racer{n}")
            outcomes.append("created")
        except (DuplicateMrn, MrnBeingRegistered, StaleWrite):
            outcomes.append("refused")

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("created") == 1
    # Exactly one patient: its patient, stream and event documents plus the one reservation
    # and its possible-duplicate index entry; the 19 refused attempts left nothing behind.
    assert his_store.count() == before + 5
    owner = mrn.lookup(his_store, "RACE001")
    assert owner is not None
    reservation = his_store.read(mrn.reservation_pk("RACE001"), mrn.RESERVATION_ID)
    assert reservation["docContents"]["patientId"] == owner
    assert "ttl" not in reservation  # held for good: never expires


def test_it_frees_the_mrn_when_the_patient_batch_fails(his_store, monkeypatch) -> None:
    def broken_commit(self):
        raise StaleWrite("P_x", "stream")

    with monkeypatch.context() as m:
        m.setattr(UnitOfWork, "commit", broken_commit)
        with pytest.raises(StaleWrite):
            register(his_store, "FREE001")
    assert his_store.try_read(mrn.reservation_pk("FREE001"), mrn.RESERVATION_ID) is None
    assert register(his_store, "FREE001").mrn == "FREE001"


def test_it_frees_an_mrn_held_by_a_crashed_registration_once_out_of_flight(
        his_store, monkeypatch) -> None:
    monkeypatch.setattr(mrn, "IN_FLIGHT_SECONDS", 1)
    mrn.reserve(his_store, "CRASH01", "never-committed")  # the process died right here
    with pytest.raises(MrnBeingRegistered):
        register(his_store, "CRASH01")
    time.sleep(2.1)
    assert register(his_store, "CRASH01").mrn == "CRASH01"


def test_it_writes_aggregate_stream_and_events_in_one_batch(his_store) -> None:
    patient = register(his_store)
    docs = his_store.query_all(keys.patient(patient.patient_id), Query())
    assert sorted(d["docType"] for d in docs) == ["Event", "Patient", "Stream"]
    assert len({d["_lsn"] for d in docs}) == 3  # one commit: consecutive feed positions
    assert max(d["_lsn"] for d in docs) - min(d["_lsn"] for d in docs) == 2
    events = his_store.query_all(keys.patient(patient.patient_id),
                                 Query(where=(Cond("docType", "=", "Event"),)))
    assert events[0]["docContents"]["actor"]["username"] == "system"
    assert events[0]["docContents"]["seq"] == 1


def test_it_discharges_a_stay_with_more_orders_than_one_batch_holds(his_store) -> None:
    from cosmos_backend.store import Cond, Query

    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = register(his_store).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Long stay"),
                           UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    for _ in range(100):
        use_cases.place_order(use_cases.PlaceOrder(
            patient_id=pid, kind="lab", test_code="CRP",
            overrides={"duplicate-order": "serial measurements"}),
            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.discharge_patient(use_cases.DischargePatient(pid, "home"), UnitOfWork(his_store),
                               actor=SYSTEM_ACTOR)
    orders = his_store.query_all(keys.patient(pid), Query(where=(Cond("docType", "=", "Order"),)))
    assert {o["docContents"]["status"] for o in orders} == {"cancelled"}
    events = his_store.query_all(keys.patient(pid), Query(where=(Cond("docType", "=", "Event"),)))
    types = [e["docContents"]["type"] for e in events]
    assert types.count("OrderCancelled") == 100
    assert types[-1] == "AdmissionEnded"
