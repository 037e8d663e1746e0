"""Merging a duplicate registration into the surviving record: the saga over two partitions,
stopped between every pair of steps and resumed, ends as an uninterrupted merge does."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients import use_cases
from patients.domain.errors import InvalidInput, MergeRefused, PatientMerged
from patients.persistence import queries
from patients.persistence.repository import PatientRecords
from patients.use_cases import merges
from tests import worklist_data as data

pytestmark = [pytest.mark.service, pytest.mark.django_db]

CLERK = Actor(id="31", username="rclerk", display_name="Rhea Clerk", roles=("clerk",))
NURSE = Actor(id="12", username="nurse", display_name="Nurse Jones", roles=("nurse",))


def _merge(store, survivor: str, retired: str, reason: str = "Registered twice in A&E") -> str:
    return merges.merge_patients(merges.MergePatients(survivor, retired, reason),
                                 UnitOfWork(store), actor=CLERK)


@pytest.fixture
def pair(his_store, his_reference_data) -> tuple[str, str]:
    """The same woman registered twice: once as "Unknown" when she arrived unconscious
    (admitted, an allergy, an order), once by name at an earlier visit."""
    survivor = data.register(his_store, "Ibáñez", "Zoë", born=date(1961, 2, 3))
    retired = data.register(his_store, "Unknown", "Female", born=date(1961, 2, 3))
    use_cases.add_allergy(use_cases.AddAllergy(patient_id=retired, allergen_code="PENICILLINS",
                                               reaction="rash", severity="severe"),
                          UnitOfWork(his_store), actor=NURSE)
    admission = data.admit(his_store, retired, "CARD", "CARD-A", bed="A01")
    data.place_order(his_store, retired, admission)
    return survivor, retired


def test_a_merge_moves_the_history_and_locks_the_retired_record(his_store, pair) -> None:
    survivor, retired = pair
    merge_id = _merge(his_store, survivor, retired)
    s = PatientRecords(UnitOfWork(his_store)).load(survivor)
    assert s.admission is not None and s.admission.bed == "A01"
    assert [a["substance"] for a in s.patient.allergies] == ["Penicillins"]
    assert len(s.active_orders()) == 1
    view = queries.patient(his_store, retired)
    assert view["mergedInto"]["survivorId"] == survivor
    assert view["mergedInto"]["state"] == "merged"
    with pytest.raises(PatientMerged) as refused:
        data.discharge(his_store, retired)
    assert refused.value.survivor_id == survivor
    assert merge_id in str(refused.value.extra["merge_id"])


def test_the_merge_is_refused_when_both_are_admitted_or_allergies_contradict(
        his_store, pair) -> None:
    survivor, retired = pair
    data.admit(his_store, survivor, "MED", "MED-1")
    with pytest.raises(MergeRefused) as both:
        _merge(his_store, survivor, retired)
    assert both.value.conflict == "both-admitted"
    assert "active admission" in str(both.value)
    data.discharge(his_store, survivor)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(patient_id=survivor),
                                        UnitOfWork(his_store), actor=NURSE)
    with pytest.raises(MergeRefused) as allergies:
        _merge(his_store, survivor, retired)
    assert allergies.value.conflict == "allergy-status-conflict"
    assert "Penicillins" in str(allergies.value)
    with pytest.raises(InvalidInput):
        _merge(his_store, survivor, survivor)
    assert queries.patient(his_store, retired).get("mergedInto") is None  # nothing written
