"""Rebuild, check/repair, dead letters and index use, on a real store (events drained)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from cosmos_backend.outbox import append_events
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients.domain.events import EventType
from tests import worklist_data as data
from worklists.delivery import deadletters
from worklists.delivery.projector import project_event
from worklists.ops import maintenance
from worklists.persistence import generations
from worklists.persistence.deadletters import all_letters, record
from worklists.persistence.view_rows import bucket_docs, read_row, row_id_of, view_pk
from worklists.persistence.writer import build_patients, rebuild_patient
from worklists.read import queries

pytestmark = [pytest.mark.service, pytest.mark.django_db]


@pytest.fixture
def hospital(his_store, drain_worklists):
    from patients import use_cases

    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    ids = []
    for i, (dept, ward) in enumerate([("CARD", "CARD-A"), ("MED", "MED-1"), ("SURG", "SURG-1")] * 4):
        pid = data.register(his_store, f"Family{i:02d}", "Given")
        if i % 4:
            adm = data.admit(his_store, pid, dept, ward)
            order = data.place_order(his_store, pid, adm, department=dept)
            if i % 2:
                data.update_order(his_store, pid, order, EventType.ORDER_ASSIGNED, assigneeId="9",
                                  assigneeName="N")
        ids.append(pid)
    data.discharge(his_store, ids[1])
    drain_worklists()
    return ids


def _snapshot(store, gen: int) -> dict:
    """Every view row of generation ``gen`` without the volatile fields (a row keeps the
    sequence it last changed at; a rebuild writes the current one)."""
    rows = {}
    for view, buckets in [("Admitted", ["CARD", "MED", "SURG"]), ("Orders", ["CARD", "MED", "SURG"]),
                          ("MyOrders", ["9"]), ("Names", ["FA"])]:
        for bucket in buckets:
            for doc in bucket_docs(store, gen, view, bucket):
                c = {k: v for k, v in doc["docContents"].items() if k not in ("projectedAt", "seq")}
                rows[(view, bucket, row_id_of(doc))] = c
    return rows


def test_it_rebuilds_exactly_the_incrementally_maintained_views(hospital, his_store) -> None:
    before = _snapshot(his_store, 1)
    assert len(before) > 20
    call_command("rebuild_worklists")
    assert generations.pointer(his_store)["active"] == 2
    assert _snapshot(his_store, 2) == before
    assert _snapshot(his_store, 1) == {}  # the retired generation is dropped


def test_it_reports_and_repairs_drift(hospital, his_store, capsys) -> None:
    row = next(d for d in his_store.query_all(view_pk(his_store, "Admitted", 1, "MED"), queries.Query()))
    his_store.delete(row["partitionKey"], row["id"])
    ids = list(maintenance.patient_ids(his_store))
    report = maintenance.check(his_store, ids)
    assert list(report.drifted.values()) == [["missing Admitted row"]]
    with pytest.raises(CommandError, match="drift found"):
        call_command("check_worklists")
    call_command("check_worklists", "--repair")
    assert maintenance.check(his_store, ids).drifted == {}


@pytest.mark.synthetic_events("made-up events: the projection's dead letters")
def test_it_dead_letters_a_poison_event_and_replays_it_once_fixed(hospital, his_store) -> None:
    pid = hospital[0]
    uow = UnitOfWork(his_store)
    patient = uow.get(f"P_{pid}", "patient")
    broken = {**patient, "docContents": {**patient["docContents"], "familyName": ""}}
    uow.update(broken)
    append_events(uow, f"P_{pid}", [("SomethingNew", {})], actor=SYSTEM_ACTOR.as_dict())
    uow.commit()
    seq = his_store.read(f"P_{pid}", "stream")["docContents"]["seq"]
    with pytest.raises(ValueError):
        project_event(his_store, f"P_{pid}", seq)
    record(his_store, stream_pk=f"P_{pid}", seq=seq, reason="ValueError: x", attempts=3)
    letter = all_letters(his_store)[0]
    assert letter.event_type == "SomethingNew"
    assert deadletters.replay(his_store, letter).startswith("failed again")
    fixed = UnitOfWork(his_store)
    doc = fixed.get(f"P_{pid}", "patient")
    doc["docContents"]["familyName"] = "Mended"
    fixed.update(doc)
    fixed.commit()
    call_command("replay_dead_letters", "--inline")
    assert all_letters(his_store) == []
    names = queries.run(his_store, queries.by_name("mended")).rows
    assert [r["patientId"] for r in names] == [pid]


@pytest.mark.parametrize("worklist", [
    queries.admitted("CARD"), queries.admitted("CARD", ward="CARD-A", sort="name"),
    queries.admitted("CARD", sort="stay", descending=True), queries.admitted("CARD", q="fam"),
    queries.orders("CARD"), queries.orders("CARD", status="ready", sort="urgency"),
    queries.my_orders("9", sort="bed"), queries.by_name("fam"),
], ids=lambda w: f"{w.view}-{w.sort}")
def test_it_serves_every_worklist_query_from_an_index(his_store, worklist) -> None:
    from cosmos_backend.embedded.sqlquery import compile_query
    from cosmos_backend.paging import encode_token

    query = worklist.query()
    views = his_store.container_for("V_Admitted_g1_x")  # the views container and its indexes
    for after in (None, encode_token(["x"] * len(query.ordering()))):
        from cosmos_backend.paging import decode_token

        sql, args, _ = compile_query(views.table, query,
                                     decode_token(after) if after else None)
        plan = views._conn().execute(f"EXPLAIN QUERY PLAN {sql}",
                                         ["V_x", 0, *args, 50]).fetchall()
        text = " ".join(str(row[-1]) for row in plan)
        assert "USING INDEX" in text and "_ix_" in text, text
        if not worklist.equals.get("QueryWard") and not worklist.prefix:
            assert "TEMP B-TREE" not in text, text  # sorted by the index, not afterwards


def test_it_switches_generations_without_readers_seeing_an_empty_view(hospital, his_store) -> None:
    gen, settled_at, _ = generations.begin_building(his_store)
    generations.outwait(settled_at)
    assert queries.run(his_store, queries.admitted("CARD")).rows  # still the old generation
    generations.abandon(his_store, gen)
    assert generations.pointer(his_store)["building"] is None


def test_a_bulk_build_hands_patients_already_projected_to_the_careful_path(hospital, his_store) -> None:
    """A live event projected into the building generation first (its rows and tracker are
    there): the bulk batch that collides is rolled back and its patients are rebuilt one by
    one, so the new generation still equals the incrementally maintained one."""
    before = _snapshot(his_store, 1)
    gen, settled_at, _ = generations.begin_building(his_store)
    generations.outwait(settled_at)
    early = hospital[2]  # admitted, with an order: rows in several views
    rebuild_patient(his_store, gen, early)  # what a live event would have done
    careful = build_patients(his_store, gen, hospital).careful
    assert careful == [early]  # the batches it collided with went again without it
    generations.switch(his_store, gen)
    assert _snapshot(his_store, gen) == before
    report = maintenance.check(his_store, hospital)
    assert report.behind == [] and report.drifted == {}


def test_a_tracker_of_a_release_before_the_buckets_converges_and_a_rebuild_drops_it(
        hospital, his_store, drain_worklists) -> None:
    """Trackers once lived in a partition per patient: such a patient's next event rebuilds
    it from the record (its rows are replaced, none doubled), and a rebuild deletes what the
    old tracker owned in the retired generation."""
    from cosmos_backend.envelope import wrap
    from worklists.persistence import trackers

    pid = hospital[2]  # admitted, with an order
    gen = generations.active_generation(his_store)
    current = his_store.read(trackers.tracker_pk(pid, gen), pid)
    his_store.delete(trackers.tracker_pk(pid, gen), pid)
    his_store.create(wrap(doc_id=trackers.legacy_id(gen), pk=trackers.legacy_pk(pid),
                          doc_type="ViewTracker", contents=current["docContents"]))
    assert maintenance.check_patient(his_store, gen, pid) == []
    admitted = [k for k in trackers.read_legacy_tracker(his_store, pid, gen).rows
                if k[0] == "Admitted"]
    assert admitted
    data.discharge(his_store, pid)  # rows deleted and changed
    drain_worklists()
    assert maintenance.check_patient(his_store, gen, pid) == []
    for key in admitted:  # the old tracker's rows are the patient's still
        assert read_row(his_store, gen, key) is None
    assert trackers.read_legacy_tracker(his_store, pid, gen) is None
    assert trackers.read_tracker(his_store, pid, gen).etag is not None
    owned = trackers.read_tracker(his_store, pid, gen).rows
    new, old = maintenance.rebuild(his_store, hospital)
    assert his_store.try_read(trackers.legacy_pk(pid), trackers.legacy_id(old)) is None
    assert his_store.try_read(trackers.tracker_pk(pid, old), pid) is None
    for key in owned:
        assert read_row(his_store, old, key) is None
    assert maintenance.check_patient(his_store, new, pid) == []


def test_a_tracker_written_by_another_process_is_not_trusted_from_this_ones_memory(
        hospital, his_store, drain_worklists) -> None:
    """This process keeps the trackers it saved; when another process (another worker, a
    repair) has written one since, the etag check catches it and the rows still end up as the
    record says."""
    from worklists.persistence import trackers

    pid = hospital[2]
    gen = generations.active_generation(his_store)
    kept = trackers.read_tracker(his_store, pid, gen)
    # another process saves the same tracker again: same contents, a new etag
    trackers.save_tracker(his_store, gen, kept.state, kept.rows, kept.etag, kept.row_etags)
    data.discharge(his_store, pid)
    drain_worklists()
    assert maintenance.check_patient(his_store, gen, pid) == []
    stream = his_store.read(f"P_{pid}", "stream")["docContents"]["seq"]
    assert trackers.read_tracker(his_store, pid, gen).state.seq == stream
    assert trackers.read_tracker(his_store, pid, gen).state.admission is None


def test_an_event_a_writer_projected_into_the_old_generation_only_is_in_the_new_one(
        hospital, his_store, monkeypatch) -> None:
    """A rebuild builds while writers still learn of the new generation: a writer that did
    not know yet projects a patient's event into the active generation only, after that
    patient was built. Once every writer knows, the rebuild builds such patients again, so
    the new generation still equals the incrementally maintained one."""
    from cosmos_backend.outbox import stream_head
    from hisadmin.core import keys
    from hisadmin.core.recent_events import read_events
    from worklists.persistence.writer import apply

    pid = hospital[0]  # registered only: built in the first chunk
    staled = []
    # However slow this machine, the stale write below lands before every writer knows.
    monkeypatch.setattr(generations, "SETTLE_SECONDS", 3.0)

    def stale_writer(_: int) -> None:
        if staled:
            return
        adm = data.admit(his_store, pid, "MED", "MED-1")
        stream = keys.patient(pid)
        head = stream_head(his_store, stream)
        apply(his_store, 1, pid, [read_events(his_store, stream, [head])[head]])  # old only
        staled.append(adm)

    gen, _ = maintenance.rebuild(his_store, hospital, stale_writer)
    assert staled and gen == 2
    assert any(row["patientId"] == pid for row in queries.run(
        his_store, queries.admitted("MED")).rows)
    report = maintenance.check(his_store, hospital)
    assert report.behind == [] and report.drifted == {}


def test_a_patient_registered_after_the_listing_and_projected_into_the_old_generation_only_is_in_the_new_one(
        hospital, his_store, monkeypatch) -> None:
    """The list of patients was made before the rebuild began; a patient registered after
    it, whose events a writer that did not know of the new generation projected into the
    old one only, is found by the tracker saved there and built too."""
    import time

    from cosmos_backend.outbox import stream_head
    from hisadmin.core import keys
    from hisadmin.core.recent_events import read_events
    from worklists.persistence.writer import apply

    monkeypatch.setattr(generations, "SETTLE_SECONDS", 3.0)  # as in the test above
    listed_at = time.time()
    ids = list(hospital)
    late = []

    def stale_writer(_: int) -> None:
        if late:
            return
        pid = data.register(his_store, "Latecomer", "Lena")
        data.admit(his_store, pid, "MED", "MED-1")
        stream = keys.patient(pid)
        head = stream_head(his_store, stream)
        events = read_events(his_store, stream, range(1, head + 1))
        apply(his_store, 1, pid, [events[s] for s in sorted(events)])  # old generation only
        late.append(pid)

    gen, _ = maintenance.rebuild(his_store, ids, stale_writer, listed_at=listed_at)
    assert late and gen == 2
    assert late[0] in {row["patientId"] for row in queries.run(
        his_store, queries.admitted("MED")).rows}
    report = maintenance.check(his_store, [*hospital, *late])
    assert report.behind == [] and report.drifted == {}
