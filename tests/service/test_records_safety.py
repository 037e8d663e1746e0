"""Registration, discharge and corrections against a real embedded store: a possible
duplicate is refused until confirmed (names folded, exact index), discharge cancels only the
orders it was shown and commits whole, a corrected name moves the index entry."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from cosmos_backend.store import DocumentStore, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.domain.errors import InvalidInput, OrdersChanged, PossibleDuplicate
from patients.domain.records import identity_key
from patients.persistence import identities, mrn, queries
from patients.persistence.repository import PatientRecords

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk", display_name="Cleo Clerk", roles=("clerk",))
DOC = Actor(id="3", username="doc", display_name="Dr Doc", roles=("clinician",))


@pytest.fixture
def store(his_store: DocumentStore) -> DocumentStore:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    return his_store


def register(
    store: DocumentStore,
    given: str = "John",
    family: str = "Smith",
    born: date = date(1970, 1, 1),
    **kw: object,
) -> str:
    return use_cases.register_patient(
        use_cases.RegisterPatient(given_name=given, family_name=family, birth_date=born, **kw),
        UnitOfWork(store),
        actor=CLERK,
    ).patient_id


def people(store: DocumentStore, given: str, family: str, born: date) -> list[str]:
    doc = store.try_read(identities.partition(identity_key(family, given, born)), identities.DOC_ID)
    return [] if doc is None else [e["patientId"] for e in doc["docContents"]["people"]]


def test_it_folds_case_accents_and_spacing_into_the_identity_key() -> None:
    assert identity_key("Müller ", "  jose", date(1970, 1, 1)) == identity_key(
        "MULLER", "José", date(1970, 1, 1)
    )
    assert identity_key("Smith", "John", date(1970, 1, 1)) != identity_key(
        "Smith", "John", date(1970, 1, 2)
    )


def test_it_refuses_a_possible_duplicate_and_writes_nothing(store) -> None:
    first = register(store)
    number = queries.patient(store, first)["mrn"]
    before = store.count()
    with pytest.raises(PossibleDuplicate) as refused:
        register(store, given="JOHN", family="smíth")
    assert refused.value.candidates == [
        {"id": first, "mrn": number, "name": "SMITH, John", "birth_date": "1970-01-01"}
    ]
    assert refused.value.problem_type == "possible-duplicate"
    assert store.count() == before  # the MRN held on the way was given back


def test_it_registers_the_same_names_and_birth_date_once_confirmed(store) -> None:
    first = register(store)
    second = register(store, given="john", family="SMITH", confirm_not_duplicate=True)
    assert second != first
    assert sorted(people(store, "John", "Smith", date(1970, 1, 1))) == sorted([first, second])
    with pytest.raises(PossibleDuplicate) as refused:  # a third is told about both
        register(store)
    assert {c["id"] for c in refused.value.candidates} == {first, second}


def test_it_does_not_warn_about_another_birth_date_or_name(store) -> None:
    register(store)
    register(store, born=date(1970, 1, 2))
    register(store, given="Jon")


def test_a_failed_registration_gives_its_index_entry_back(store) -> None:
    register(store, mrn="TAKEN01", given="Ann", family="Other")
    with pytest.raises(Exception, match="already registered"):
        register(store, mrn="TAKEN01")  # the MRN is taken: nothing is left behind
    assert people(store, "John", "Smith", date(1970, 1, 1)) == []
    register(store)  # and no phantom candidate warns about it


def test_an_entry_whose_patient_never_came_names_no_candidate_once_old(store, monkeypatch) -> None:
    pid = register(store)
    pk = identities.partition(identity_key("Smith", "John", date(1970, 1, 1)))
    doc = store.read(pk, identities.DOC_ID)
    body = {k: v for k, v in doc.items() if not k.startswith("_")}
    body["docContents"]["people"] = [
        {
            "patientId": "ghost",
            "mrn": "",
            "familyName": "Smith",
            "givenName": "John",
            "birthDate": "1970-01-01",
            "at": 0,
        }
    ]  # a crash long ago, and pid's entry lost
    store.replace(body)
    register(store, given="JOHN")  # no candidate: the ghost is old and has no patient
    assert "ghost" not in people(store, "John", "Smith", date(1970, 1, 1))
    assert pid


def test_a_corrected_name_moves_the_index_entry(store) -> None:
    pid = register(store)
    etag = queries.patient(store, pid)["etag"]
    use_cases.update_demographics(
        use_cases.UpdateDemographics(pid, "John", "Smyth", date(1970, 1, 1), "male", etag),
        UnitOfWork(store),
        actor=CLERK,
    )
    assert people(store, "John", "Smith", date(1970, 1, 1)) == []
    assert people(store, "John", "Smyth", date(1970, 1, 1)) == [pid]
    register(store)  # "Smith" is free again
    with pytest.raises(PossibleDuplicate):
        register(store, family="SMYTH")


def _stay(store: DocumentStore) -> tuple[str, list[str]]:
    pid = register(store, given="Dee", family="Discharged")
    use_cases.admit_patient(
        use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"), UnitOfWork(store), actor=CLERK
    )
    # the allergies asked before prescribing (else a medication order is allergy-status-unknown)
    use_cases.record_no_known_allergies(
        use_cases.RecordNoKnownAllergies(pid), UnitOfWork(store), actor=CLERK
    )
    orders = [
        use_cases.place_order(
            use_cases.PlaceOrder(
                patient_id=pid,
                kind="medication",
                medication_code="PARA",
                dose=Decimal("1"),
                unit="g",
                route="PO",
                frequency="Q8H",
            ),
            UnitOfWork(store),
            actor=DOC,
        ).order_id,
        use_cases.place_order(
            use_cases.PlaceOrder(patient_id=pid, kind="lab", test_code="CRP", urgency="stat"),
            UnitOfWork(store),
            actor=DOC,
        ).order_id,
    ]
    use_cases.progress_order(
        use_cases.ProgressOrder(pid, orders[0], "start"), UnitOfWork(store), actor=DOC
    )
    return pid, orders


def test_discharge_cancels_exactly_the_orders_confirmed_and_keeps_the_note(store) -> None:
    pid, orders = _stay(store)
    admission = use_cases.discharge_patient(
        use_cases.DischargePatient(
            pid,
            "care-home",
            note="  Home with district nurse.  ",
            cancel_order_ids=tuple(reversed(orders)),
        ),
        UnitOfWork(store),
        actor=CLERK,
    )
    assert admission.discharge_note == "Home with district nurse."
    stored = queries.admission(store, pid, admission.admission_id)
    assert stored["dischargeNote"] == "Home with district nurse."
    assert {queries.order(store, pid, o)["status"] for o in orders} == {"cancelled"}
    ended = [e for e in queries.events(store, pid)[0] if e["type"] == "AdmissionEnded"]
    assert ended[0]["data"]["note"] == "Home with district nurse."


def test_discharge_refuses_when_the_active_orders_are_not_the_ones_confirmed(store) -> None:
    pid, orders = _stay(store)
    before = store.count()
    for shown in ((orders[0],), (*orders, "another")):  # one placed meanwhile / one gone
        with pytest.raises(OrdersChanged) as refused:
            use_cases.discharge_patient(
                use_cases.DischargePatient(pid, "home", cancel_order_ids=shown),
                UnitOfWork(store),
                actor=CLERK,
            )
        assert sorted(refused.value.extra["active_orders"]) == sorted(orders)
    assert store.count() == before
    assert PatientRecords(UnitOfWork(store)).load(pid).admission is not None


def test_discharge_commits_whole_or_not_at_all(store) -> None:
    pid, orders = _stay(store)
    stale = queries.chart(store, pid)["active_admission"]["etag"]
    use_cases.transfer_patient(
        use_cases.TransferPatient(pid, "MED-2", ""), UnitOfWork(store), actor=CLERK
    )
    before = store.count()
    with pytest.raises(StaleWrite):
        use_cases.discharge_patient(
            use_cases.DischargePatient(
                pid, "home", expected_version=stale, cancel_order_ids=tuple(orders)
            ),
            UnitOfWork(store),
            actor=CLERK,
        )
    with pytest.raises(InvalidInput):
        use_cases.discharge_patient(
            use_cases.DischargePatient(
                pid, "home", note="x" * 2001, cancel_order_ids=tuple(orders)
            ),
            UnitOfWork(store),
            actor=CLERK,
        )
    assert store.count() == before
    assert {queries.order(store, pid, o)["status"] for o in orders} == {"in_progress", "created"}


def test_the_mrn_held_for_a_refused_duplicate_is_free_again(store) -> None:
    register(store)
    with pytest.raises(PossibleDuplicate):
        register(store, mrn="WANTED1")
    assert mrn.lookup(store, "WANTED1") is None
    assert store.query_all(mrn.reservation_pk("WANTED1"), Query()) == []


def test_patients_the_index_never_saw_are_entered_by_the_backfill(store) -> None:
    """A store from before the index (its entries gone here): registering the same person
    again is not flagged until ``index_identities`` runs; it enters each patient once."""
    first = register(store)
    other = register(store, given="Ann", family="Other")
    for given, family in (("John", "Smith"), ("Ann", "Other")):
        store.delete(identities.partition(identity_key(family, given, date(1970, 1, 1))),
                     identities.DOC_ID)
    out = StringIO()
    call_command("index_identities", stdout=out)
    assert "2 patients checked, 2 entered" in out.getvalue()
    assert people(store, "John", "Smith", date(1970, 1, 1)) == [first]
    assert people(store, "Ann", "Other", date(1970, 1, 1)) == [other]
    with pytest.raises(PossibleDuplicate) as refused:
        register(store)
    assert [c["id"] for c in refused.value.candidates] == [first]
    again = identities.backfill(store)
    assert (again.patients, again.entered) == (2, 0)
    assert people(store, "John", "Smith", date(1970, 1, 1)) == [first]
