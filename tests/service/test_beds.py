"""Beds at the use-case level, on a real embedded store: a ward's beds in one partition,
occupied → (patient leaves) → cleaning → (marked clean) → free; only free beds assigned."""

from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
import redis as redis_client

from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys, views_lag
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.embedded_redis import EmbeddedRedis
from patients import tasks, use_cases
from patients.domain.beds import BedState
from patients.domain.errors import (
    BedBeingCleaned,
    BedNotBeingCleaned,
    BedOccupied,
    UnknownBed,
    UnknownWard,
)
from patients.persistence import beds, reference, setup_marks
from patients.tasks import follow_up
from patients.use_cases.beds import (
    MIGRATION_STEP,
    MarkBedClean,
    mark_bed_clean,
    migrate_bed_holds,
)

pytestmark = [pytest.mark.service, pytest.mark.django_db]
CLERK = Actor(id="7", username="clerk", display_name="Alan Clerk", roles=("clerk",))
NURSE = Actor(id="8", username="nurse", display_name="Florence Night", roles=("nurse",))


@pytest.fixture
def store(his_store: DocumentStore) -> DocumentStore:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    return his_store


def _patient(store: DocumentStore, family: str) -> str:
    return use_cases.register_patient(
        use_cases.RegisterPatient("Ann", family, date(1950, 5, 17), "female"),
        UnitOfWork(store),
        actor=CLERK,
    ).patient_id


def _admit(store: DocumentStore, pid: str, bed: str, ward: str = "MED-1") -> None:
    use_cases.admit_patient(
        use_cases.AdmitPatient(pid, "MED", ward, "Pneumonia", bed=bed),
        UnitOfWork(store),
        actor=CLERK,
    )


def _board(store: DocumentStore, ward: str = "MED-1") -> dict[str, object]:
    entry = reference.all_of(store, "Ward")[ward]
    return {b.code: b for b in beds.board(store, ward, entry["beds"])}


def _follow_up_last(store: DocumentStore, pid: str) -> str:
    seq = store.read(keys.patient(pid), "stream")["docContents"]["seq"]
    return follow_up(keys.patient(pid), seq)


def _discharge(store: DocumentStore, pid: str) -> None:
    use_cases.discharge_patient(
        use_cases.DischargePatient(pid, "home"), UnitOfWork(store), actor=CLERK
    )


def test_it_shows_the_occupant_on_the_board_from_one_partition(store) -> None:
    pid = _patient(store, "Board")
    _admit(store, pid, "M103")
    board = _board(store)
    bed = board["M103"]
    assert bed.state == BedState.OCCUPIED
    assert bed.occupant.patient_id == pid and bed.occupant.display_name == "BOARD, Ann"
    assert (bed.occupant.sex, bed.occupant.birth_date) == ("female", "1950-05-17")
    assert bed.occupant.admitted_at[:10] == date.today().isoformat()
    assert bed.occupant.allergy_status == "unknown"
    assert {b.state for code, b in board.items() if code != "M103"} == {BedState.FREE}
    docs = store.query_all(beds.ward_pk("MED-1"), Query(where=(Cond("docType", "=", "Bed"),)))
    assert [d["id"] for d in docs] == ["bed-M103"]  # a free bed has no document


def test_it_sets_the_bed_to_cleaning_after_discharge_and_frees_it_when_marked_clean(store) -> None:
    first, second = _patient(store, "Leaving"), _patient(store, "Next")
    _admit(store, first, "M101")
    _discharge(store, first)
    assert _board(store)["M101"].state == BedState.OCCUPIED  # until the follow-up runs
    assert _follow_up_last(store, first) == "bed set to cleaning"
    assert _board(store)["M101"].state == BedState.CLEANING
    assert _board(store)["M101"].occupant is None  # no patient data on a cleaning card
    _follow_up_last(store, first)  # a redelivery changes nothing
    assert _board(store)["M101"].state == BedState.CLEANING
    with pytest.raises(BedBeingCleaned) as refused:
        _admit(store, second, "M101")
    assert refused.value.http_status == 409
    mark_bed_clean(MarkBedClean("MED-1", "M101"), UnitOfWork(store), actor=NURSE)
    assert _board(store)["M101"].state == BedState.FREE
    _admit(store, second, "M101")
    assert _board(store)["M101"].occupant.patient_id == second


def test_it_records_who_marked_a_bed_clean_in_the_wards_stream(store) -> None:
    pid = _patient(store, "Audit")
    _admit(store, pid, "M102")
    _discharge(store, pid)
    _follow_up_last(store, pid)
    mark_bed_clean(MarkBedClean("MED-1", "M102"), UnitOfWork(store), actor=NURSE)
    events = store.query_all(beds.ward_pk("MED-1"), Query(where=(Cond("docType", "=", "Event"),)))
    assert len(events) == 1
    c = events[0]["docContents"]
    assert c["type"] == "BedCleaned" and c["actor"]["username"] == "nurse"
    assert c["data"]["bed"] == "M102" and c["data"]["cleaningSince"]


def test_it_refuses_to_clean_a_bed_that_is_not_being_cleaned(store) -> None:
    pid = _patient(store, "Occupied")
    _admit(store, pid, "M104")
    for bed in ("M104", "M105"):  # occupied, free
        with pytest.raises(BedNotBeingCleaned) as refused:
            mark_bed_clean(MarkBedClean("MED-1", bed), UnitOfWork(store), actor=NURSE)
        assert refused.value.http_status == 409
    assert _board(store)["M104"].state == BedState.OCCUPIED


def test_it_says_which_ward_or_bed_is_unknown(store) -> None:
    with pytest.raises(UnknownWard) as ward:
        mark_bed_clean(MarkBedClean("NOPE", "M101"), UnitOfWork(store), actor=NURSE)
    with pytest.raises(UnknownBed) as bed:
        mark_bed_clean(MarkBedClean("MED-1", "Z9"), UnitOfWork(store), actor=NURSE)
    assert ward.value.http_status == bed.value.http_status == 404


def test_it_refuses_an_occupied_bed_and_writes_nothing(store) -> None:
    _admit(store, _patient(store, "First"), "M106")
    other = _patient(store, "Second")
    before = store.count()
    with pytest.raises(BedOccupied):
        _admit(store, other, "M106")
    assert store.count() == before


def test_it_moves_the_card_on_transfer_and_cleans_the_old_bed_after(store) -> None:
    pid = _patient(store, "Moving")
    _admit(store, pid, "M107")
    use_cases.transfer_patient(
        use_cases.TransferPatient(pid, "MED-2", "M205"), UnitOfWork(store), actor=CLERK
    )
    assert _board(store, "MED-2")["M205"].occupant.patient_id == pid
    assert _follow_up_last(store, pid) == "bed set to cleaning"
    assert _board(store)["M107"].state == BedState.CLEANING
    assert _board(store, "MED-2")["M205"].state == BedState.OCCUPIED


def test_a_bed_whose_follow_up_is_late_is_set_to_cleaning_by_the_next_admission(store) -> None:
    first, second = _patient(store, "Gone"), _patient(store, "Waiting")
    _admit(store, first, "M108")
    _discharge(store, first)  # the follow-up has not run (late or lost)
    with pytest.raises(BedBeingCleaned):
        _admit(store, second, "M108")
    assert _board(store)["M108"].state == BedState.CLEANING
    assert _follow_up_last(store, first) == "bed set to cleaning"  # then a no-op
    assert _board(store)["M108"].state == BedState.CLEANING


def test_a_hold_that_never_committed_is_taken_over(store, monkeypatch) -> None:
    pid = _patient(store, "Taker")
    store.create(
        wrap(
            doc_id=beds.bed_doc_id("M109"),
            pk=beds.ward_pk("MED-1"),
            doc_type="Bed",
            contents={
                "wardId": "MED-1",
                "bed": "M109",
                "state": "occupied",
                "patientId": pid,
                "admissionId": "never-committed",
                "occupant": {"patientId": pid, "admissionId": "never-committed"},
            },
        )
    )
    with pytest.raises(BedOccupied):  # young: it may still be in flight
        _admit(store, pid, "M109")
    monkeypatch.setattr(beds, "IN_FLIGHT_SECONDS", 0)
    _admit(store, pid, "M109")
    assert _board(store)["M109"].occupant.admission_id != "never-committed"


def test_it_refreshes_the_card_after_an_allergy_or_a_name_change(store) -> None:
    pid = _patient(store, "Allergic")
    _admit(store, pid, "M110")
    use_cases.add_allergy(
        use_cases.AddAllergy(pid, "Latex", "Hives", "mild"), UnitOfWork(store), actor=NURSE
    )
    assert _follow_up_last(store, pid) == "bed card refreshed"
    assert _board(store)["M110"].occupant.has_allergies
    use_cases.update_demographics(
        use_cases.UpdateDemographics(pid, "Ann", "Renamed", date(1950, 5, 17), "female"),
        UnitOfWork(store),
        actor=CLERK,
    )
    _follow_up_last(store, pid)
    assert _board(store)["M110"].occupant.display_name == "RENAMED, Ann"
    assert _follow_up_last(store, pid) == "nothing to do"  # a redelivery


def test_it_moves_holds_of_the_per_bed_layout_once(store) -> None:
    held, left = _patient(store, "Legacy"), _patient(store, "LegacyGone")
    use_cases.admit_patient(
        use_cases.AdmitPatient(held, "SURG", "SURG-1", "x", bed="S101"),
        UnitOfWork(store),
        actor=CLERK,
    )
    use_cases.admit_patient(
        use_cases.AdmitPatient(left, "SURG", "SURG-1", "x", bed="S102"),
        UnitOfWork(store),
        actor=CLERK,
    )
    _discharge(store, left)
    # As the earlier layout stored them: one partition per bed, no ward documents.
    for pid, bed in ((held, "S101"), (left, "S102")):
        doc = beds.read_bed(store, "SURG-1", bed)
        store.delete(doc["partitionKey"], doc["id"])
        adm = doc["docContents"]["admissionId"]
        store.create(
            wrap(
                doc_id=beds.LEGACY_DOC_ID,
                pk=beds.legacy_pk("SURG-1", bed),
                doc_type="BedOccupancy",
                contents={"wardId": "SURG-1", "bed": bed, "patientId": pid, "admissionId": adm},
            )
        )
    assert list(migrate_bed_holds(UnitOfWork(store), actor=SYSTEM_ACTOR)) == [
        "bed holds moved to their wards: 1"
    ]
    board = _board(store, "SURG-1")
    assert board["S101"].occupant.patient_id == held
    assert board["S101"].occupant.display_name == "LEGACY, Ann"
    assert board["S102"].state == BedState.FREE  # its patient had left: free, as it was
    for bed in ("S101", "S102"):
        assert store.try_read(beds.legacy_pk("SURG-1", bed), beds.LEGACY_DOC_ID) is None
    assert setup_marks.is_done(store, MIGRATION_STEP)
    assert list(migrate_bed_holds(UnitOfWork(store), actor=SYSTEM_ACTOR)) == []


HIGH = {"respiration_rate": 22, "spo2": 94, "on_oxygen": False, "systolic_bp": 104,
        "pulse": 112, "consciousness": "A", "temperature": 38.4}  # NEWS2 7: high


def _observe(store: DocumentStore, pid: str, values: dict, taken_at: str | None) -> dict:
    from patients.use_cases import observations as obs

    return obs.record_observations(obs.RecordObservations(pid, values, taken_at),
                                   UnitOfWork(store), actor=NURSE)


def test_the_card_keeps_the_stays_news2_badge_current(store) -> None:
    from patients.use_cases import observations as obs

    pid = _patient(store, "Scored")
    _admit(store, pid, "M105")
    badge = _board(store)["M105"].occupant.news2
    assert badge["score"] is None and not badge["incomplete"]
    assert badge["nextDueAt"] == _board(store)["M105"].occupant.admitted_at  # due since then

    now = datetime.now(UTC).astimezone(timezone(timedelta(hours=1)))  # an offset as sent
    high = _observe(store, pid, HIGH, (now - timedelta(minutes=2)).isoformat())
    assert _follow_up_last(store, pid) == "bed card refreshed"
    badge = _board(store)["M105"].occupant.news2
    assert (badge["score"], badge["risk"], badge["notEscalated"]) == (7, "high", True)
    assert badge["nextDueAt"] == high["news2"]["nextDueAt"]  # 30 minutes on

    _observe(store, pid, {"pulse": 95}, now.isoformat())  # a partial set, microseconds
    _follow_up_last(store, pid)
    badge = _board(store)["M105"].occupant.news2
    assert badge["incomplete"] and badge["score"] == 7  # the latest score stays

    obs.escalate(obs.EscalateObservations(pid, high["observationId"], "Dr Rao, registrar",
                                          "reviewed"), UnitOfWork(store), actor=NURSE)
    assert _follow_up_last(store, pid) == "bed card refreshed"
    assert _board(store)["M105"].occupant.news2["notEscalated"] is False
    assert _follow_up_last(store, pid) == "nothing to do"  # a redelivery

    use_cases.transfer_patient(use_cases.TransferPatient(pid, "MED-1", "M106"),
                               UnitOfWork(store), actor=CLERK)
    # The badge moves with them: the transfer's request makes no read for it (two round
    # trips and the bed); the follow-up after the transfer brings it to the new card.
    assert _follow_up_last(store, pid) == "bed set to cleaning; new bed's card refreshed"
    assert _board(store)["M106"].occupant.news2["score"] == 7


def test_a_new_stay_starts_without_the_last_stays_score(store) -> None:
    pid = _patient(store, "Again")
    _admit(store, pid, "M107")
    _observe(store, pid, HIGH, None)
    _discharge(store, pid)
    _admit(store, pid, "M108")
    badge = _board(store)["M108"].occupant.news2
    assert badge["score"] is None and badge["incomplete"] is False


@pytest.fixture
def broker(tmp_path, settings):
    redis = EmbeddedRedis(tmp_path / "redis")
    settings.CELERY_BROKER_URL = redis.celery_url
    yield redis
    redis.shutdown()


def test_a_page_of_follow_ups_runs_every_stream_and_sends_a_failing_one_on_alone(
        store, broker, monkeypatch: pytest.MonkeyPatch) -> None:
    """The relay sends a change-feed page's follow-ups as one message: each stream's runs in
    turn, and one that fails goes to the broker as a follow-up message of its own (which
    retries it), not dropped and not holding up the others."""
    leaving = [_patient(store, f"Ødegård-{i}") for i in range(3)]
    for pid, bed in zip(leaving, ("M101", "M102", "M103"), strict=True):
        _admit(store, pid, bed)
        _discharge(store, pid)
    streams = [[keys.patient(pid), [store.read(keys.patient(pid), "stream")["docContents"]["seq"]]]
               for pid in leaving]
    real = tasks._beds_and_merges

    def fails_for_the_second(st, stream_pk, event):
        if stream_pk == keys.patient(leaving[1]):
            raise RuntimeError("the store said no")
        return real(st, stream_pk, event)

    monkeypatch.setattr(tasks, "_beds_and_merges", fails_for_the_second)
    marks = [{"range": "0", "position": 1}]
    assert tasks.follow_up_page(streams, marks) == "3 streams, 1 sent on alone"
    board = _board(store)
    assert (board["M101"].state, board["M102"].state, board["M103"].state) == (
        BedState.CLEANING, BedState.OCCUPIED, BedState.CLEANING)
    queued = redis_client.Redis(unix_socket_path=broker.socket).lrange("celery", 0, -1)
    [message] = [json.loads(m) for m in queued]
    assert message["headers"]["task"] == "patients.follow_up"
    args = json.loads(base64.b64decode(message["body"]))[0]
    assert args == [*streams[1], marks]  # with its page's marks: unfinished until handled
    assert [noted for _, noted in views_lag.unfinished_pages()["0@1"]] == [
        ["patients.follow_up", "celery", args]]
    monkeypatch.setattr(tasks, "_beds_and_merges", real)
    assert tasks.follow_up(*args) == "bed set to cleaning"  # what that message does
    assert _board(store)["M102"].state == BedState.CLEANING
    assert views_lag.unfinished_pages() == {}
