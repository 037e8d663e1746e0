"""Merging a duplicate registration into the surviving record: the saga over two partitions,
stopped between every pair of steps and resumed, ends as an uninterrupted merge does."""

from __future__ import annotations

import io
import re
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core.management import CommandError, call_command

from cosmos_backend.store import Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import Actor
from patients import tasks, use_cases
from patients.domain.errors import InvalidInput, MergeInProgress, MergeRefused, PatientMerged
from patients.persistence import beds, queries
from patients.persistence import merges as store_of
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


# ------------------------------------------------------------------ killed between steps
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")


class Killed(BaseException):
    """The process running the saga dies here (nothing below it runs)."""


def _normal(value, names: dict[str, str]):
    """``value`` with the ids and instants that differ from one run to another evened out
    (the two records' ids and MRNs named by their part)."""
    if isinstance(value, dict):
        return {UUID.sub("<id>", k): _normal(v, names) for k, v in value.items()
                # (the saga's "returned": the versions of the copies it gave back, etags)
                if k not in ("eventId", "returned", "_etag", "_ts", "_lsn", "_rid", "_self")}
    if isinstance(value, list):
        return sorted((_normal(v, names) for v in value), key=repr)
    if isinstance(value, str):
        for real, said in names.items():
            value = value.replace(real, said)
        return "<instant>" if INSTANT.match(value) else UUID.sub("<id>", value)
    return value


def end_state(store, survivor: str, retired: str, bed: str) -> dict:
    """Both partitions as stored (documents, events in order) and the bed, evened out."""
    names = {survivor: "<survivor>", retired: "<retired>", bed: "<bed>"}
    for pid in (survivor, retired):
        record = queries.patient(store, pid)
        names[record["mrn"]] = f"<mrn of {names[pid]}>"
        names[record["familyName"]] = f"<family name of {names[pid]}>"
    state = {}
    for pid in (survivor, retired):
        docs = store.query_all(keys.patient(pid), Query())
        state[names[pid]] = {
            "documents": _normal([{"type": d["docType"], "open": d.get("open"),
                                   "contents": d["docContents"]} for d in docs
                                  if d["docType"] != "Event"], names),
            "events": [(e["type"], _normal(e["data"], names)) for e in sorted(
                (d["docContents"] for d in docs if d["docType"] == "Event"),
                key=lambda e: e["seq"])]}
    state["bed"] = _normal(beds.read_bed(store, "CARD-A", bed)["docContents"], names)
    return state


BEDS = {"A": "A01", "B": "A02"}


def _history(store, tag: str) -> tuple[str, str]:
    """Two records of one person; the retired one with a stay (in bed A01 or A02), an
    allergy and three orders (three parts when a part holds one document)."""
    survivor = data.register(store, f"Ibáñez{tag}", "Zoë", born=date(1961, 2, 3))
    retired = data.register(store, f"Unknown{tag}", "Female", born=date(1961, 2, 3))
    use_cases.add_allergy(use_cases.AddAllergy(patient_id=retired, allergen_code="PENICILLINS",
                                               reaction="rash", severity="severe"),
                          UnitOfWork(store), actor=NURSE)
    admission = data.admit(store, retired, "CARD", "CARD-A", bed=BEDS[tag])
    for what in ("Chest X-ray", "CT head"):
        data.place_order(store, retired, admission, description=what)
    return survivor, retired


def _relay_meets(store, *pids: str) -> None:
    """What the relay does after a crash: each stream's events reach ``patients.follow_up``
    (the saga has stopped: its last step is older than the wait)."""
    for pid in pids:
        for event in queries.events(store, pid, page_size=100)[0][::-1]:
            tasks._follow_up(keys.patient(pid), int(event["seq"]))


def _kill_after(monkeypatch, steps: int) -> list[str]:
    done: list[str] = []

    def checkpoint(step: str) -> None:
        done.append(step)
        if len(done) == steps:
            raise Killed(step)
    monkeypatch.setattr(merges, "_checkpoint", checkpoint)
    return done


@pytest.fixture
def small_parts(monkeypatch, his_reference_data):
    monkeypatch.setattr(store_of, "PART_SIZE", 1)
    monkeypatch.setattr(merges, "STALE_AFTER", timedelta(0))


MERGE_STEPS = ["lock", "copy 1/3", "copy 2/3", "copy 3/3"]  # then "finish"
UNDO_STEPS = ["unlock", "return 1/3", "take back 1/3", "return 2/3", "take back 2/3",
              "return 3/3", "take back 3/3"]  # then the finish


@pytest.mark.parametrize("killed_after", range(1, len(MERGE_STEPS) + 1))
def test_a_merge_killed_after_any_step_ends_as_an_uninterrupted_one(
        his_store, small_parts, monkeypatch, killed_after) -> None:
    reference = _history(his_store, "A")
    steps = _kill_after(monkeypatch, 0)
    _merge(his_store, *reference)
    assert steps == [*MERGE_STEPS, "finish"]
    expected = end_state(his_store, *reference, "A01")

    survivor, retired = _history(his_store, "B")
    steps = _kill_after(monkeypatch, killed_after)
    with pytest.raises(Killed):
        _merge(his_store, survivor, retired)
    assert steps[-1] == MERGE_STEPS[killed_after - 1]
    if killed_after == 1:  # locked: the retired record waits for the merge
        with pytest.raises(MergeInProgress):
            data.discharge(his_store, retired)
    monkeypatch.setattr(merges, "_checkpoint", lambda step: None)
    _relay_meets(his_store, retired, survivor)
    assert end_state(his_store, survivor, retired, "A02") == expected


@pytest.mark.parametrize("killed_after", range(1, len(UNDO_STEPS) + 1))
def test_an_undo_killed_after_any_step_ends_as_an_uninterrupted_one(
        his_store, small_parts, monkeypatch, killed_after) -> None:
    reference = _history(his_store, "A")
    before = end_state(his_store, *reference, "A01")
    merge_id = _merge(his_store, *reference)
    steps = _kill_after(monkeypatch, 0)
    merges.unmerge_patients(merges.UnmergePatients(reference[0], merge_id, "Not the same "
                                                   "person after all"), UnitOfWork(his_store),
                            actor=CLERK)
    assert steps == [*UNDO_STEPS, "unlock"]
    expected = end_state(his_store, *reference, "A01")
    # the retired record is as it was before the merge, with the saga's document beside it
    # (and its stream further on by the steps' events)
    assert [d for d in expected["<retired>"]["documents"] if d["type"] not in (
        "Merge", "Stream")] == [d for d in before["<retired>"]["documents"]
                                if d["type"] != "Stream"]
    assert expected["bed"] == before["bed"]

    survivor, retired = _history(his_store, "B")
    merge_id = _merge(his_store, survivor, retired)
    steps = _kill_after(monkeypatch, killed_after)
    with pytest.raises(Killed):
        merges.unmerge_patients(merges.UnmergePatients(survivor, merge_id, "Not the same "
                                                       "person after all"),
                                UnitOfWork(his_store), actor=CLERK)
    monkeypatch.setattr(merges, "_checkpoint", lambda step: None)
    _relay_meets(his_store, retired, survivor)
    assert end_state(his_store, survivor, retired, "A02") == expected


def test_a_merge_the_survivor_stops_allowing_while_it_is_stopped_rolls_back(
        his_store, small_parts, monkeypatch) -> None:
    survivor, retired = _history(his_store, "A")
    before = end_state(his_store, survivor, retired, "A01")
    _kill_after(monkeypatch, 1)
    with pytest.raises(Killed):
        _merge(his_store, survivor, retired)
    monkeypatch.setattr(merges, "_checkpoint", lambda step: None)
    data.admit(his_store, survivor, "MED", "MED-1")  # the survivor still takes commands
    _relay_meets(his_store, retired, survivor)
    after = end_state(his_store, survivor, retired, "A01")
    [saga] = [d["contents"] for d in after["<retired>"]["documents"] if d["type"] == "Merge"]
    assert saga["state"] == "rolled_back"
    assert "Both records have an active admission" in saga["undoReason"]
    assert [t for t, _ in after["<retired>"]["events"]][-3:] == [
        "PatientMergeStarted", "PatientUnmergeStarted", "PatientMergeRolledBack"]
    assert after["bed"] == before["bed"]
    data.discharge(his_store, retired)  # a record of its own again


def test_an_undo_gives_back_what_was_done_to_the_moved_history_meanwhile(
        his_store, his_reference_data) -> None:
    survivor, retired = _history(his_store, "A")
    merge_id = _merge(his_store, survivor, retired)
    [order, _] = PatientRecords(UnitOfWork(his_store)).load(survivor).active_orders()
    use_cases.progress_order(use_cases.ProgressOrder(patient_id=survivor,
                                                     order_id=order.order_id, action="start"),
                             UnitOfWork(his_store), actor=NURSE)
    merges.unmerge_patients(merges.UnmergePatients(survivor, merge_id, "Two people after all"),
                            UnitOfWork(his_store), actor=CLERK)
    back = PatientRecords(UnitOfWork(his_store)).load(retired)
    assert back.orders[order.order_id].status == "in_progress"
    assert back.admission is not None and back.admission.bed == "A01"
    s = PatientRecords(UnitOfWork(his_store)).load(survivor)
    assert (s.admission, s.orders, s.patient.allergies) == (None, {}, [])
    assert beds.read_bed(his_store, "CARD-A", "A01")["docContents"]["patientId"] == retired
    with pytest.raises(MergeRefused) as twice:
        merges.unmerge_patients(merges.UnmergePatients(survivor, merge_id, "Once more"),
                                UnitOfWork(his_store), actor=CLERK)
    assert twice.value.conflict == "not-merged"


def test_an_undo_after_a_day_is_refused(his_store, pair) -> None:
    survivor, retired = pair
    merge_id = _merge(his_store, survivor, retired)
    with time_machine.travel(datetime.now(UTC) + timedelta(days=1, minutes=1)), \
            pytest.raises(MergeRefused) as late:
        merges.unmerge_patients(merges.UnmergePatients(survivor, merge_id, "Too late now"),
                                UnitOfWork(his_store), actor=CLERK)
    assert late.value.conflict == "undo-too-late"
    assert queries.patient(his_store, retired)["mergedInto"]["state"] == "merged"


def test_the_operators_see_a_stopped_merge_and_resume_it(
        his_store, small_parts, monkeypatch, drain_worklists) -> None:
    survivor, retired = _history(his_store, "A")
    _kill_after(monkeypatch, 2)  # locked, one part copied
    with pytest.raises(Killed):
        _merge(his_store, survivor, retired)
    monkeypatch.setattr(merges, "_checkpoint", lambda step: None)
    drain_worklists()
    out = io.StringIO()
    call_command("check_worklists", stdout=out)
    assert "1 merge(s) in progress" in out.getvalue()
    assert "merging since" in out.getvalue()
    listed = io.StringIO()
    with pytest.raises(CommandError, match="1 merge"):
        call_command("merges", stdout=listed)
    mrn = queries.patient(his_store, retired)["mrn"]
    assert f"{mrn} into" in listed.getvalue() and "Merging" in listed.getvalue()
    resumed = io.StringIO()
    call_command("merges", "--resume", "--all", stdout=resumed)
    assert "0 in progress" in resumed.getvalue() and ": Merged," in resumed.getvalue()
    assert queries.patient(his_store, retired)["mergedInto"]["state"] == "merged"
