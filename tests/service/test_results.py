"""Completing lab and imaging orders with their results, the events, and acknowledging them."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from cosmos_backend.store import Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.domain.errors import InvalidInput, InvalidTransition, UnitMismatch
from patients.domain.results import GivenValue
from patients.persistence import queries

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk1", display_name="Clerk One", roles=("clerk",))
DOCTOR = Actor(id="8", username="drwho", display_name="Dr Who", roles=("clinician",))
NURSE = Actor(id="9", username="nurse1", display_name="Nurse One", roles=("nurse",))
CBC = (GivenValue("HGB", Decimal("120")), GivenValue("WBC", Decimal("7.5")),
       GivenValue("PLT", Decimal("450")))


@pytest.fixture
def patient(his_store) -> str:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Rita", "Result", date(1960, 5, 5)), UnitOfWork(his_store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Anaemia"),
                            UnitOfWork(his_store), actor=CLERK)
    # the allergies asked, so a medication order is not allergy-status-unknown
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=CLERK)
    return pid


def started(store, pid: str, **order: Any) -> str:
    placed = use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, **order),
                                   UnitOfWork(store), actor=DOCTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, placed.order_id, "start"),
                             UnitOfWork(store), actor=NURSE)
    return placed.order_id


def complete(store, pid: str, oid: str, results: tuple[GivenValue, ...] = (),
             report: str = "") -> Any:
    return use_cases.progress_order(use_cases.ProgressOrder(
        pid, oid, "complete", results=results, report=report), UnitOfWork(store), actor=NURSE)


def events(store, pid: str) -> list[dict[str, Any]]:
    items, _ = queries.events(store, pid, page_size=10)
    return items


def written(store, pid: str) -> list[dict[str, Any]]:
    return store.query_all(keys.patient(pid), Query())


def test_a_lab_order_completes_with_a_value_per_analyte_flagged(his_store, patient) -> None:
    oid = started(his_store, patient, kind="lab", test_code="CBC")
    complete(his_store, patient, oid, CBC)
    stored = queries.order(his_store, patient, oid)
    assert stored["status"] == "completed"
    results = stored["results"]
    assert [(v["analyte"], v["value"], v["unit"], v["flag"]) for v in results["values"]] == [
        ("HGB", 120, "g_l", "L"), ("WBC", 7.5, "x10e9_l", None), ("PLT", 450, "x10e9_l", "H")]
    assert results["resultedBy"] == "nurse1" and results["resultedAt"]
    assert results["values"][0]["low"] == 130 and results["values"][0]["high"] == 175
    # one batch: OrderCompleted and ResultsRecorded, in that order
    recorded, completed = events(his_store, patient)[:2]
    assert completed["type"] == "OrderCompleted" and recorded["type"] == "ResultsRecorded"
    assert recorded["seq"] == completed["seq"] + 1
    data = recorded["data"]
    assert data["orderId"] == oid and data["placedBy"] == DOCTOR.id and data["kind"] == "lab"
    assert data["flags"] == {"abnormal": True, "high": ["PLT"], "low": ["HGB"]}
    assert data["results"]["values"] == results["values"]


def test_a_value_in_another_unit_is_converted_and_another_dimension_refused(
        his_store, patient) -> None:
    oid = started(his_store, patient, kind="lab", test_code="CBC")
    before = written(his_store, patient)
    wrong = (GivenValue("HGB", Decimal("12"), "mmol_l"), *CBC[1:])
    with pytest.raises(UnitMismatch) as err:
        complete(his_store, patient, oid, wrong)
    assert err.value.http_status == 422 and err.value.field == "results.HGB.unit"
    assert written(his_store, patient) == before
    in_mg = (GivenValue("HGB", Decimal("140000"), "mg_l"), *CBC[1:])
    complete(his_store, patient, oid, in_mg)
    hgb = queries.order(his_store, patient, oid)["results"]["values"][0]
    assert hgb["value"] == 140 and hgb["unit"] == "g_l" and hgb["flag"] is None


def test_a_lab_order_without_every_value_is_refused_and_nothing_written(
        his_store, patient) -> None:
    oid = started(his_store, patient, kind="lab", test_code="CBC")
    before = written(his_store, patient)
    for partial in ((), CBC[:2]):
        with pytest.raises(InvalidInput) as err:
            complete(his_store, patient, oid, partial)
        assert err.value.http_status == 422 and err.value.field.startswith("results.")
    assert "Platelets" in str(err.value)
    assert written(his_store, patient) == before
    assert queries.order(his_store, patient, oid)["status"] == "in_progress"


def test_an_imaging_order_needs_its_report(his_store, patient) -> None:
    oid = started(his_store, patient, kind="imaging", modality="CR", body_part="CHEST")
    with pytest.raises(InvalidInput) as err:
        complete(his_store, patient, oid, report="   ")
    assert err.value.field == "report"
    with pytest.raises(InvalidInput) as err:
        complete(his_store, patient, oid, CBC, report="Clear.")
    assert err.value.field == "results"
    complete(his_store, patient, oid, report="No consolidation. Heart size normal.")
    results = queries.order(his_store, patient, oid)["results"]
    assert results["report"] == "No consolidation. Heart size normal."
    assert results["values"] == []
    assert events(his_store, patient)[0]["data"]["flags"] == {
        "abnormal": False, "high": [], "low": []}


def test_a_medication_order_completes_as_before(his_store, patient) -> None:
    oid = started(his_store, patient, kind="medication", medication_code="PARA",
                  dose=Decimal("1000"), unit="mg", route="PO", frequency="Q8H")
    complete(his_store, patient, oid)
    assert queries.order(his_store, patient, oid)["status"] == "completed"
    assert "results" not in queries.order(his_store, patient, oid)
    assert events(his_store, patient)[0]["type"] == "OrderCompleted"


def test_completing_twice_is_a_conflict(his_store, patient) -> None:
    oid = started(his_store, patient, kind="lab", test_code="CBC")
    complete(his_store, patient, oid, CBC)
    with pytest.raises(InvalidTransition):
        complete(his_store, patient, oid, CBC)


def test_acknowledging_marks_the_results_reviewed_once(his_store, patient) -> None:
    oid = started(his_store, patient, kind="lab", test_code="CBC")
    with pytest.raises(InvalidTransition):  # no results yet
        use_cases.acknowledge_result(use_cases.AcknowledgeResult(patient, oid),
                                     UnitOfWork(his_store), actor=DOCTOR)
    complete(his_store, patient, oid, CBC)
    etag = queries.order(his_store, patient, oid)["etag"]
    use_cases.acknowledge_result(use_cases.AcknowledgeResult(patient, oid, etag),
                                 UnitOfWork(his_store), actor=DOCTOR)
    results = queries.order(his_store, patient, oid)["results"]
    assert results["acknowledgedBy"] == "drwho" and results["acknowledgedAt"]
    event = events(his_store, patient)[0]
    assert event["type"] == "ResultAcknowledged"
    assert event["data"]["orderId"] == oid and event["data"]["placedBy"] == DOCTOR.id
    with pytest.raises(InvalidTransition) as err:
        use_cases.acknowledge_result(use_cases.AcknowledgeResult(patient, oid),
                                     UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.http_status == 409 and "drwho" in str(err.value)
    with pytest.raises(StaleWrite):  # the version before the acknowledgement
        use_cases.acknowledge_result(use_cases.AcknowledgeResult(patient, oid, etag),
                                     UnitOfWork(his_store), actor=DOCTOR)
