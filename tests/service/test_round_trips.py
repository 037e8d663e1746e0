"""Each command's synchronous store round trips, counted by the benchmark's metering store:
one read and one batch per single-partition command, one more where a bed or MRN partition
is held (warm caches, as in a running process)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal

import pytest

from bench.counting import CountingStore, Meter
from cosmos_backend.store import DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.domain.errors import InvalidTransition
from patients.persistence import queries
from patients.persistence.documents import OPEN_FIELD

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk", display_name="Clerk", roles=("clerk",))


@pytest.fixture
def metered(his_store: DocumentStore) -> tuple[DocumentStore, Meter]:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    meter = Meter()
    return CountingStore(his_store, meter), meter


def _count(meter: Meter, run: Callable[[], object]) -> int:
    meter.reset()
    run()
    return meter.snapshot()["round_trips"]


def _stay(store: DocumentStore, n: int, bed: str) -> tuple[str, str]:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Ana", f"Trips{n}", date(1970, 1, 1)), UnitOfWork(store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "x", bed=bed),
                            UnitOfWork(store), actor=CLERK)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(store), actor=CLERK)
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", medication_code="PARA", dose=Decimal("1"),
        unit="g", route="PO", frequency="Q8H", first_dose="now"),  # a dose time now
        UnitOfWork(store), actor=CLERK)
    use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="lab", test_code="CRP"),
                          UnitOfWork(store), actor=CLERK)
    return pid, order.order_id


def test_it_makes_one_read_and_one_batch_per_single_partition_command(metered) -> None:
    store, meter = metered
    _stay(store, 0, "M101")  # warm-up: reference data and the MRN block are cached now

    def uow() -> UnitOfWork:
        return UnitOfWork(store)

    pid = ""

    def register() -> None:
        nonlocal pid
        pid = use_cases.register_patient(use_cases.RegisterPatient(
            "Bo", "Trips", date(1971, 2, 3)), uow(), actor=CLERK).patient_id

    # The MRN holder, the possible-duplicate index entry (a create: no read), the patient
    # batch. The index needs a partition keyed by who the patient is, which neither the MRN's
    # nor the patient's is (docs/patients.md, "Possible duplicates").
    assert _count(meter, register) == 3
    assert _count(meter, lambda: use_cases.update_demographics(use_cases.UpdateDemographics(
        pid, "Bo", "Trips", date(1971, 2, 3), "male"), uow(), actor=CLERK)) == 2
    allergy = ""

    def add_allergy() -> None:
        nonlocal allergy
        allergy = use_cases.add_allergy(use_cases.AddAllergy(pid, "Latex", "Hives", "mild"),
                                        uow(), actor=CLERK)

    assert _count(meter, add_allergy) == 2
    assert _count(meter, lambda: use_cases.remove_allergy(use_cases.RemoveAllergy(
        pid, allergy, reason="resolved"), uow(), actor=CLERK)) == 2
    assert _count(meter, lambda: use_cases.admit_patient(use_cases.AdmitPatient(
        pid, "MED", "MED-1", "x", bed="M102"), uow(), actor=CLERK)) == 3  # + the bed
    order_id = ""

    def place() -> None:
        nonlocal order_id
        order_id = use_cases.place_order(use_cases.PlaceOrder(
            patient_id=pid, kind="lab", test_code="CBC"), uow(), actor=CLERK).order_id

    assert _count(meter, place) == 2
    assert _count(meter, lambda: use_cases.assign_order(use_cases.AssignOrder(
        pid, order_id, "9", "Nurse"), uow(), actor=CLERK)) == 2
    assert _count(meter, lambda: use_cases.progress_order(use_cases.ProgressOrder(
        pid, order_id, "ready"), uow(), actor=CLERK)) == 2
    assert _count(meter, lambda: use_cases.transfer_patient(use_cases.TransferPatient(
        pid, "MED-2", "M205"), uow(), actor=CLERK)) == 3  # + the new bed
    assert _count(meter, lambda: use_cases.discharge_patient(use_cases.DischargePatient(
        pid, "home"), uow(), actor=CLERK)) == 2  # the beds are given back afterwards


def test_it_administers_in_one_read_and_one_batch(metered) -> None:
    """The record's one query (its open documents and the closed orders, whose doses of
    the last 24 hours count in the daily total), then the batch: reference data from the
    warm cache."""
    store, meter = metered
    pid, order_id = _stay(store, 1, "M103")
    use_cases.progress_order(use_cases.ProgressOrder(pid, order_id, "ready"),
                             UnitOfWork(store), actor=CLERK)
    # A closed order of the same medication: read by the same query, no round trip more.
    closed = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", medication_code="PARA", dose=Decimal("1"),
        unit="g", route="PO", frequency="Q8H", first_dose="now",
        overrides={"duplicate-order": "Second prescription for the night team"}),
        UnitOfWork(store), actor=CLERK).order_id
    use_cases.progress_order(use_cases.ProgressOrder(pid, closed, "cancel", "Changed to IV"),
                             UnitOfWork(store), actor=CLERK)
    meter.reset()
    use_cases.administer(use_cases.Administer(pid, order_id, Decimal("1"), "g"),
                         UnitOfWork(store), actor=CLERK)
    assert meter.snapshot()["by_kind"] == {"query": 1, "batch": 1}
    # A dose on the cancelled order is refused after the same one read.
    meter.reset()
    with pytest.raises(InvalidTransition):
        use_cases.administer(use_cases.Administer(pid, closed, Decimal("1"), "g"),
                             UnitOfWork(store), actor=CLERK)
    assert meter.snapshot()["by_kind"] == {"query": 1}


def test_it_upgrades_a_record_written_before_documents_were_marked(his_store) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid, order_id = _stay(his_store, 2, "M104")
    pk = keys.patient(pid)
    for doc in his_store.query_all(pk, Query()):  # as an earlier version wrote them
        if doc.pop(OPEN_FIELD, None):
            his_store.replace({k: v for k, v in doc.items() if not k.startswith("_")})
    use_cases.progress_order(use_cases.ProgressOrder(pid, order_id, "ready"),
                             UnitOfWork(his_store), actor=CLERK)
    marked = {d["docType"] for d in his_store.query_all(pk, Query())
              if d.get(OPEN_FIELD)}
    assert marked == {"Patient", "Stream", "Admission", "Order"}
    assert queries.order(his_store, pid, order_id)["status"] == "ready"
