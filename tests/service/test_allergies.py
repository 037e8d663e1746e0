"""Allergy use cases against a real embedded store: coded or free text, the allergy status,
"no known allergies" as an explicit act, and removal that keeps the allergy in the record."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.domain.errors import InvalidInput, InvalidTransition, UnknownAllergy, UnknownReference
from patients.domain.records import AllergyStatus
from patients.persistence import queries
from patients.persistence.repository import PatientRecords

pytestmark = [pytest.mark.service, pytest.mark.django_db]
DOC = Actor(id="3", username="doc", display_name="Dr Doc", roles=("clinician",))
NURSE = Actor(id="4", username="nina", display_name="Nina Nurse", roles=("nurse",))


@pytest.fixture
def store(his_store: DocumentStore) -> DocumentStore:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    return his_store


@pytest.fixture
def pid(store: DocumentStore) -> str:
    return use_cases.register_patient(use_cases.RegisterPatient(
        given_name="Ada", family_name="Allergic", birth_date=date(1960, 5, 6), sex="female"),
        UnitOfWork(store), actor=SYSTEM_ACTOR).patient_id


def patient(store: DocumentStore, pid: str):
    return PatientRecords(UnitOfWork(store)).load(pid).patient


def add(store: DocumentStore, pid: str, **kw: object) -> str:
    kw.setdefault("severity", "moderate")
    return use_cases.add_allergy(use_cases.AddAllergy(patient_id=pid, **kw), UnitOfWork(store),
                                 actor=NURSE)


def events(store: DocumentStore, pid: str) -> list[dict]:
    return queries.events(store, pid)[0]


def test_a_coded_allergy_takes_the_allergen_name_and_is_checkable(store, pid) -> None:
    assert patient(store, pid).allergy_status == AllergyStatus.UNKNOWN
    aid = add(store, pid, allergen_code="PENICILLINS", reaction="Anaphylaxis",
              severity="severe", criticality="high")
    p = patient(store, pid)
    assert p.allergy_status == AllergyStatus.HAS_ALLERGIES
    assert p.allergies == [{
        "allergyId": aid, "allergenCode": "PENICILLINS", "substance": "Penicillins",
        "checkable": True, "reaction": "Anaphylaxis", "severity": "severe",
        "criticality": "high", "status": "active", "recordedAt": p.allergies[0]["recordedAt"],
        "recordedBy": "nina"}]
    [event] = [e for e in events(store, pid) if e["type"] == "AllergyAdded"]
    assert event["data"] == p.allergies[0]
    assert queries.patient(store, pid)["allergyStatus"] == "has_allergies"


def test_free_text_is_not_checkable_and_duplicates_are_refused(store, pid) -> None:
    add(store, pid, substance="  Hair   dye ", reaction="Hives")
    [a] = patient(store, pid).allergies
    assert (a["allergenCode"], a["substance"], a["checkable"], a["criticality"]) == (
        None, "Hair dye", False, "unable-to-assess")
    with pytest.raises(InvalidInput) as err:
        add(store, pid, substance="HAIR DYE")
    assert err.value.field == "substance"
    add(store, pid, allergen_code="LATEX")
    with pytest.raises(InvalidInput) as err:
        add(store, pid, allergen_code="LATEX", severity="severe")
    assert err.value.field == "allergen_code"


@pytest.mark.parametrize("kw, error, field", [
    ({"allergen_code": "UNOBTAINIUM"}, UnknownReference, "allergen_code"),
    ({}, InvalidInput, "substance"),
    ({"allergen_code": "LATEX", "substance": "Latex"}, InvalidInput, "substance"),
    ({"allergen_code": "LATEX", "criticality": "medium"}, InvalidInput, "criticality"),
    ({"allergen_code": "LATEX", "severity": "fatal"}, InvalidInput, "severity"),
])
def test_bad_allergies_are_refused_on_their_field(store, pid, kw, error, field) -> None:
    with pytest.raises(error) as err:
        add(store, pid, **kw)
    assert err.value.field == field
    assert patient(store, pid).allergies == []


def test_no_known_allergies_is_explicit_refused_with_allergies_and_ended_by_one(
        store, pid) -> None:
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(store), actor=NURSE)
    p = patient(store, pid)
    assert p.allergy_status == AllergyStatus.NO_KNOWN_ALLERGIES
    assert p.no_known_allergies["recordedBy"] == "nina"
    assert events(store, pid)[0]["type"] == "NoKnownAllergiesRecorded"
    with pytest.raises(InvalidTransition):  # already recorded
        use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                            UnitOfWork(store), actor=NURSE)
    add(store, pid, allergen_code="PEANUT", severity="severe")
    p = patient(store, pid)
    assert p.allergy_status == AllergyStatus.HAS_ALLERGIES and p.no_known_allergies is None
    with pytest.raises(InvalidTransition) as err:
        use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                            UnitOfWork(store), actor=NURSE)
    assert err.value.http_status == 409 and "Peanut" in str(err.value)


def test_no_known_allergies_refuses_a_stale_version(store, pid) -> None:
    etag = queries.patient(store, pid)["etag"]
    add(store, pid, substance="Iodine")
    with pytest.raises(StaleWrite):
        use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid, etag),
                                            UnitOfWork(store), actor=NURSE)


def test_removal_keeps_the_allergy_with_its_reason(store, pid) -> None:
    aid = add(store, pid, allergen_code="LATEX", severity="mild")
    with pytest.raises(InvalidInput) as err:
        use_cases.remove_allergy(use_cases.RemoveAllergy(pid, aid), UnitOfWork(store),
                                 actor=DOC)
    assert err.value.field == "reason"
    with pytest.raises(InvalidInput) as err:
        use_cases.remove_allergy(use_cases.RemoveAllergy(pid, aid, reason="other", detail=" "),
                                 UnitOfWork(store), actor=DOC)
    assert err.value.field == "detail"
    use_cases.remove_allergy(use_cases.RemoveAllergy(pid, aid, reason="entered-in-error"),
                             UnitOfWork(store), actor=DOC)
    p = patient(store, pid)
    [a] = p.allergies
    assert (a["status"], a["removalReason"], a["removedBy"], a["substance"]) == (
        "removed", "entered-in-error", "doc", "Latex")
    assert a["removedAt"] and a["recordedBy"] == "nina"
    assert p.allergy_status == AllergyStatus.UNKNOWN  # removing is not "none known"
    assert events(store, pid)[0]["data"] == {"allergyId": aid, "substance": "Latex",
                                            "reason": "entered-in-error", "detail": ""}
    with pytest.raises(UnknownAllergy):  # only an active allergy can be removed
        use_cases.remove_allergy(use_cases.RemoveAllergy(pid, aid, reason="resolved"),
                                 UnitOfWork(store), actor=DOC)
    add(store, pid, allergen_code="LATEX", severity="severe")  # recorded anew
    assert [a["status"] for a in patient(store, pid).allergies] == ["removed", "active"]


def test_an_allergy_stored_before_coding_reads_active_free_text_unassessed(store, pid) -> None:
    uow = UnitOfWork(store)
    doc = uow.get(keys.patient(pid), "patient")
    doc["docContents"]["allergies"] = [{"allergyId": "old", "substance": "Penicillin",
                                        "reaction": "Rash", "severity": "severe",
                                        "recordedAt": "2020-01-01T00:00:00+00:00",
                                        "recordedBy": "someone"}]
    store.upsert(doc)
    p = patient(store, pid)
    [a] = p.allergies
    assert (a["allergenCode"], a["checkable"], a["status"], a["criticality"]) == (
        None, False, "active", "unable-to-assess")
    assert p.allergy_status == AllergyStatus.HAS_ALLERGIES
    use_cases.remove_allergy(use_cases.RemoveAllergy(pid, "old", reason="resolved"),
                             UnitOfWork(store), actor=DOC)
    assert patient(store, pid).allergies[0]["status"] == "removed"
