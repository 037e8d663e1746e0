"""Possible duplicates on a real embedded store: noted by the relay's follow-up after a
registration or a correction, listed a page at a time, and "not the same person" decided
once, in one batch with its event."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.store import Cond, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import Actor
from patients import use_cases
from patients.domain.duplicates import PairNotListed, pair_id
from patients.domain.errors import InvalidInput
from patients.persistence import duplicates, queries
from patients.tasks import follow_up
from patients.use_cases.duplicates import MarkNotSamePerson, mark_not_same_person

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk", display_name="Alan Clerk", roles=("clerk",))
BORN = date(1980, 5, 1)


def register(store: DocumentStore, family: str, given: str, *, born: date = BORN,
             sex: str = "female") -> str:
    """Register (as a second registration would be: confirmed not a duplicate) and run the
    relay's follow-up of the registration, as the worker does."""
    pid = use_cases.register_patient(
        use_cases.RegisterPatient(given, family, born, sex, confirm_not_duplicate=True),
        UnitOfWork(store), actor=CLERK).patient_id
    follow_up(keys.patient(pid), store.read(keys.patient(pid), "stream")["docContents"]["seq"])
    return pid


def listed(store: DocumentStore) -> list[tuple[str, str, tuple[str, ...]]]:
    pairs, token = duplicates.page(store, page_size=50)
    assert token is None
    return [(p.first["familyName"], p.second["familyName"], p.reasons) for p in pairs]


def test_it_lists_a_pair_registered_apart_with_why(his_store: DocumentStore) -> None:
    a = register(his_store, "Müller", "Anna")
    register(his_store, "Fernández", "Anna")  # same day and sex, another name: not listed
    register(his_store, "Mueller", "Anna", sex="male")  # another sex: not listed
    b = register(his_store, "MUELLER", "anna")
    [(first, second, reasons)] = listed(his_store)
    assert {first, second} == {"Müller", "MUELLER"}
    assert reasons[0] == "Same birth date (1 May 1980) and sex (female)"
    assert reasons[1].startswith("Similar names: ")
    assert duplicates.find(his_store, pair_id(b, a)).pair_id == pair_id(a, b)


def test_it_pages_the_pairs(his_store: DocumentStore) -> None:
    for i in range(3):
        born = date(1970 + i, 1, 2)
        register(his_store, "O'Brien", "Siobhán", born=born)
        register(his_store, "OBrien", "Siobhan", born=born)
    first, token = duplicates.page(his_store, page_size=2)
    assert len(first) == 2 and token
    second, token = duplicates.page(his_store, page_size=2, continuation=token)
    assert len(second) == 1 and token is None
    assert {p.pair_id for p in first}.isdisjoint(p.pair_id for p in second)


def test_not_the_same_person_is_an_event_and_is_not_listed_again(
        his_store: DocumentStore) -> None:
    a = register(his_store, "García", "Ana")
    b = register(his_store, "Garcia", "Ana")
    with pytest.raises(InvalidInput):  # a decision needs its reason
        mark_not_same_person(MarkNotSamePerson(pair_id(a, b), "  "), UnitOfWork(his_store),
                             actor=CLERK)
    mark_not_same_person(MarkNotSamePerson(pair_id(a, b), "Twins: different GP letters"),
                         UnitOfWork(his_store), actor=CLERK)
    assert listed(his_store) == []
    [event] = [d["docContents"] for d in his_store.query_all(
        duplicates.PAIRS, Query(where=(Cond("docSubType", "=", "NotSamePerson"),)))]
    assert event["type"] == "NotSamePerson"
    assert event["actor"]["username"] == "clerk"
    assert event["data"]["reason"] == "Twins: different GP letters"
    assert {p["patientId"] for p in event["data"]["patients"]} == {a, b}
    # Decided once: a second decision (another tab) and a re-found pair change nothing.
    with pytest.raises(PairNotListed):
        mark_not_same_person(MarkNotSamePerson(pair_id(a, b), "again"),
                             UnitOfWork(his_store), actor=CLERK)
    assert duplicates.enter(his_store, b) == 0
    assert listed(his_store) == []


def test_a_correction_moves_the_patient_to_the_new_day(his_store: DocumentStore) -> None:
    a = register(his_store, "Nguyễn", "Mai", born=date(1990, 3, 4))
    register(his_store, "Nguyen", "Thi Mai")
    assert listed(his_store) == []
    patient = queries.patient(his_store, a)
    use_cases.update_demographics(use_cases.UpdateDemographics(
        patient_id=a, expected_version=patient["etag"], given_name="Mai", family_name="Nguyễn",
        birth_date=BORN, sex="female"), UnitOfWork(his_store), actor=CLERK)
    follow_up(keys.patient(a), his_store.read(keys.patient(a), "stream")["docContents"]["seq"])
    [(_, _, reasons)] = listed(his_store)
    assert reasons[1].startswith("One name is part of the other")
    old = his_store.read(duplicates.births("1990-03-04", "female"), duplicates.PEOPLE)
    assert old["docContents"]["people"] == []


def test_backfill_finds_pairs_among_records_the_index_never_saw(
        his_store: DocumentStore) -> None:
    for family in ("Strauß", "Strauss"):
        use_cases.register_patient(use_cases.RegisterPatient(
            "Jürgen", family, BORN, "male", confirm_not_duplicate=True),
            UnitOfWork(his_store), actor=CLERK)
    assert listed(his_store) == []  # no follow-up ran
    assert duplicates.backfill(his_store) == (2, 1)
    assert duplicates.backfill(his_store) == (2, 0)  # again: nothing new
    [(_, _, reasons)] = listed(his_store)
    assert reasons[1] == "Same name apart from case, accents or punctuation"


def test_alike_unidentified_patients_are_noted_in_batches_not_a_write_each(
        his_store: DocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A major incident: unidentified men registered under one placeholder name and birth
    date. Each is alike to every earlier one; the 130th registration notes its 129
    pairs in two batches (a hundred at most each), not 129 writes, and noting again finds
    them all there."""
    pids = [use_cases.register_patient(use_cases.RegisterPatient(
        "Male", "Unknown", date(1900, 1, 1), "male", confirm_not_duplicate=True),
        UnitOfWork(his_store), actor=CLERK).patient_id for _ in range(130)]
    for pid in pids[:-1]:
        duplicates.enter(his_store, pid)
    writes: list[str] = []
    for name in ("create", "replace", "upsert", "execute_batch"):
        real = getattr(his_store, name)
        monkeypatch.setattr(his_store, name, lambda *a, _n=name, _r=real, **k: (
            writes.append(_n), _r(*a, **k))[1])
    assert duplicates.enter(his_store, pids[-1]) == 129
    # the births index's one replace, then the pairs' two batches
    assert writes == ["replace", "execute_batch", "execute_batch"]
    assert his_store.count_query(duplicates.PAIRS, Query(
        where=(Cond("docSubType", "=", duplicates.OPEN),))) == 130 * 129 // 2
    writes.clear()
    assert duplicates.enter(his_store, pids[-1]) == 0
    assert writes == []


def test_a_pair_noted_meanwhile_does_not_lose_the_rest_of_the_batch(
        his_store: DocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two follow-ups of alike patients at once: the other noted one of this batch's pairs
    between the look and the batch. The batch is refused whole; the pairs are then noted one
    by one, and the one already there stays as the other noted it."""
    a = register(his_store, "Doe", "Jane")
    b = register(his_store, "Doe", "Jane")
    c = use_cases.register_patient(use_cases.RegisterPatient(
        "Jane", "Doe", BORN, "female", confirm_not_duplicate=True),
        UnitOfWork(his_store), actor=CLERK).patient_id
    real = his_store.query_all
    monkeypatch.setattr(his_store, "query_all", lambda pk, q, **k: (
        [] if pk == duplicates.PAIRS else real(pk, q, **k)))
    duplicates._note(his_store, [tuple(sorted((a, c)))], "2026-01-01T00:00:00+00:00")
    assert duplicates.enter(his_store, c) == 1  # (b, c); (a, c) was there
    monkeypatch.undo()
    assert {p.pair_id for p in duplicates.page(his_store, page_size=50)[0]} == {
        pair_id(a, b), pair_id(a, c), pair_id(b, c)}
