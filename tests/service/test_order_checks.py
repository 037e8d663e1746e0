"""place_order runs the order checks: refused without a reason per failed check (nothing
written), placed with them, each override kept on the order and in its event."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from cosmos_backend.store import Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.domain import checks
from patients.domain.errors import InvalidInput, OrderConflicts
from patients.persistence import queries

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk1", display_name="Clerk One", roles=("clerk",))
DOCTOR = Actor(id="8", username="drwho", display_name="Dr Who", roles=("clinician",))


@pytest.fixture
def patient(his_store) -> str:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Ann", "Allergic", date(1970, 1, 1)), UnitOfWork(his_store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"),
                            UnitOfWork(his_store), actor=CLERK)
    use_cases.add_allergy(use_cases.AddAllergy(pid, "Penicillin", "anaphylaxis", "severe"),
                          UnitOfWork(his_store), actor=DOCTOR)
    return pid


def amox(pid: str, **more: Any) -> use_cases.PlaceOrder:
    values: dict[str, Any] = {"medication_code": "AMOX", "dose": Decimal("500"), "unit": "mg",
                              "route": "PO", "frequency": "Q8H", **more}
    return use_cases.PlaceOrder(patient_id=pid, kind="medication", **values)


def written(store, pid: str) -> list[dict[str, Any]]:
    return store.query_all(keys.patient(pid), Query())


def test_an_allergy_conflict_refuses_the_order_and_writes_nothing(his_store, patient) -> None:
    before = written(his_store, patient)
    with pytest.raises(OrderConflicts) as err:
        use_cases.place_order(amox(patient), UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.http_status == 409 and err.value.problem_type == "allergy-conflict"
    [conflict] = err.value.extra["conflicts"]
    assert conflict["type"] == "allergy-conflict"
    assert "Penicillin" in conflict["detail"] and "anaphylaxis" in conflict["detail"]
    assert written(his_store, patient) == before


def test_an_override_with_a_reason_places_the_order_and_keeps_the_override(
        his_store, patient) -> None:
    order = use_cases.place_order(amox(patient, overrides={
        "allergy-conflict": "Tolerated amoxicillin in 2024 without reaction"}),
        UnitOfWork(his_store), actor=DOCTOR)
    [override] = order.details["overrides"]
    assert override["check"] == "allergy-conflict" and override["by"] == "drwho"
    assert override["reason"] == "Tolerated amoxicillin in 2024 without reaction"
    assert "Penicillin" in override["detail"] and override["at"]
    stored = queries.order(his_store, patient, order.order_id)
    assert stored["overrides"] == [override]
    [event] = [e for e in queries.events(his_store, patient)[0]
               if e["type"] == "MedicationPrescribed"]
    assert event["data"]["overrides"] == [override]


def test_an_empty_reason_is_no_override(his_store, patient) -> None:
    with pytest.raises(OrderConflicts):
        use_cases.place_order(amox(patient, overrides={"allergy-conflict": "   "}),
                              UnitOfWork(his_store), actor=DOCTOR)


def test_each_failed_check_needs_its_own_reason(his_store, patient) -> None:
    use_cases.place_order(amox(patient, overrides={"allergy-conflict": "Desensitised in clinic"}),
                          UnitOfWork(his_store), actor=DOCTOR)
    before = written(his_store, patient)
    with pytest.raises(OrderConflicts) as err:  # the allergy answered, the duplicate not
        use_cases.place_order(amox(patient, overrides={"allergy-conflict": "Desensitised in clinic"}),
                              UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.problem_type == "duplicate-order"
    assert [c["type"] for c in err.value.extra["conflicts"]] == [
        "allergy-conflict", "duplicate-order"]
    with pytest.raises(OrderConflicts) as err:
        use_cases.place_order(amox(patient, overrides={"duplicate-order": "Second course"}),
                              UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.problem_type == "allergy-conflict"
    assert written(his_store, patient) == before
    order = use_cases.place_order(amox(patient, overrides={
        "allergy-conflict": "Desensitised in clinic", "duplicate-order": "Second course"}),
        UnitOfWork(his_store), actor=DOCTOR)
    assert [o["check"] for o in order.details["overrides"]] == [
        "allergy-conflict", "duplicate-order"]


def test_a_dose_limit_is_checked_in_the_medications_unit(his_store, patient) -> None:
    para = {"medication_code": "PARA", "route": "PO", "frequency": "Q6H"}
    with pytest.raises(OrderConflicts) as err:
        use_cases.place_order(amox(patient, dose=Decimal("2"), unit="g", **para),
                              UnitOfWork(his_store), actor=DOCTOR)
    [conflict] = err.value.extra["conflicts"]
    assert conflict["type"] == "dose-limit" and "1000 mg" in conflict["detail"]
    with pytest.raises(InvalidInput) as bad:  # millilitres are not a mass: 422, not 409
        use_cases.place_order(amox(patient, dose=Decimal("5"), unit="ml", **para),
                              UnitOfWork(his_store), actor=DOCTOR)
    assert bad.value.http_status == 422 and bad.value.field == "unit"
    order = use_cases.place_order(amox(patient, dose=Decimal("1"), unit="g", **para),
                                  UnitOfWork(his_store), actor=DOCTOR)
    assert "overrides" not in order.details  # 1 g = 1000 mg, 4000 mg a day: within limits


def test_labs_and_imaging_are_checked_for_duplicates(his_store, patient) -> None:
    lab = use_cases.PlaceOrder(patient_id=patient, kind="lab", test_code="TROP")
    scan = use_cases.PlaceOrder(patient_id=patient, kind="imaging", modality="CT",
                                body_part="HEAD")
    for cmd in (lab, scan):
        use_cases.place_order(cmd, UnitOfWork(his_store), actor=DOCTOR)
        with pytest.raises(OrderConflicts) as err:
            use_cases.place_order(cmd, UnitOfWork(his_store), actor=DOCTOR)
        assert err.value.problem_type == "duplicate-order"
    other_part = use_cases.PlaceOrder(patient_id=patient, kind="imaging", modality="CT",
                                      body_part="CHEST")
    use_cases.place_order(other_part, UnitOfWork(his_store), actor=DOCTOR)


def test_a_cancelled_order_is_no_duplicate(his_store, patient) -> None:
    lab = use_cases.PlaceOrder(patient_id=patient, kind="lab", test_code="CBC")
    first = use_cases.place_order(lab, UnitOfWork(his_store), actor=DOCTOR)
    use_cases.progress_order(use_cases.ProgressOrder(patient, first.order_id, "cancel",
                                                     "Wrong patient"),
                             UnitOfWork(his_store), actor=DOCTOR)
    use_cases.place_order(lab, UnitOfWork(his_store), actor=DOCTOR)


def test_unknown_override_keys_are_invalid_and_prn_interval_is_known(his_store, patient
                                                                     ) -> None:
    with pytest.raises(InvalidInput) as err:
        use_cases.place_order(amox(patient, overrides={"allergy": "x"}),
                              UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.http_status == 422 and err.value.field == "overrides"
    order = use_cases.place_order(amox(patient, overrides={
        "allergy-conflict": "Benefit outweighs risk", "prn-interval": "not relevant"}),
        UnitOfWork(his_store), actor=DOCTOR)
    assert [o["check"] for o in order.details["overrides"]] == ["allergy-conflict"]



def test_a_reason_of_one_short_word_counts_as_none_and_says_why(his_store, patient) -> None:
    before = written(his_store, patient)
    with pytest.raises(OrderConflicts) as err:
        use_cases.place_order(amox(patient, overrides={"allergy-conflict": "x"}),
                              UnitOfWork(his_store), actor=DOCTOR)
    [conflict] = err.value.extra["conflicts"]
    assert "10 characters" in conflict["reason_refused"]
    assert written(his_store, patient) == before


def test_ibuprofen_10_g_every_4_hours_is_a_hard_stop_no_reason_passes(his_store, patient
                                                                      ) -> None:
    before = written(his_store, patient)
    ibu = amox(patient, medication_code="IBU", dose=Decimal("10"), unit="g", frequency="Q4H",
               overrides={"dose-limit": "Patient in severe pain after surgery"})
    with pytest.raises(checks.DoseHardLimit) as err:
        use_cases.place_order(ibu, UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.http_status == 422 and err.value.problem_type == "dose-hard-limit"
    assert "cannot be overridden" in str(err.value)
    assert written(his_store, patient) == before


def test_a_daily_total_above_the_hard_daily_limit_is_a_hard_stop(his_store, patient) -> None:
    para = amox(patient, medication_code="PARA", dose=Decimal("1500"), frequency="Q4H",
                overrides={"dose-limit": "Loading regimen agreed with pharmacy"})
    with pytest.raises(checks.DoseHardLimit) as err:  # 1500 mg × 6 = 9 g > 8 g
        use_cases.place_order(para, UnitOfWork(his_store), actor=DOCTOR)
    assert "9000 mg" in str(err.value)


def test_allergies_never_asked_need_a_reason_to_prescribe(his_store) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Una", "Conscious", date(1970, 1, 1)), UnitOfWork(his_store), actor=CLERK).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Collapse"),
                            UnitOfWork(his_store), actor=CLERK)
    with pytest.raises(OrderConflicts) as err:
        use_cases.place_order(amox(pid), UnitOfWork(his_store), actor=DOCTOR)
    assert err.value.problem_type == "allergy-status-unknown"
    # a lab test needs no allergy history
    use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="lab", test_code="CBC"),
                          UnitOfWork(his_store), actor=DOCTOR)
    order = use_cases.place_order(amox(pid, overrides={
        "allergy-status-unknown": "Unconscious patient, no relative reachable"}),
        UnitOfWork(his_store), actor=DOCTOR)
    [override] = order.details["overrides"]
    assert override["check"] == "allergy-status-unknown" and override["by"] == "drwho"
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=DOCTOR)
    use_cases.place_order(amox(pid, medication_code="PARA", dose=Decimal("1000"),
                               frequency="Q6H"), UnitOfWork(his_store), actor=DOCTOR)
