"""My patients on a real store: projected from the patients' events into the ward's bucket
and from the ward's events into its shift rows, joined when read; the relay's page messages
carry both; redelivery (and an older event after a newer one) changes nothing, a rebuild
writes the same rows and the check agrees, or names and repairs what drifted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.management import call_command

from cosmos_backend.outbox import stream_head
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import consumers, keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.inputs import hospital_time_zone
from patients import use_cases
from patients.domain.shifts import Nurse, Shift, ShiftHours
from patients.persistence import assignments, handovers, queries
from patients.persistence.beds import ward_pk
from patients.use_cases.allergies import (
    AddAllergy,
    RecordNoKnownAllergies,
    add_allergy,
    record_no_known_allergies,
)
from patients.use_cases.assignments import AssignNurses, assign_nurses
from patients.use_cases.handovers import (
    AcknowledgeHandover,
    WriteHandover,
    acknowledge_handover,
    write_handover,
)
from tests import worklist_data as data
from tests.worklist_data import relay_page
from worklists.delivery import catch_up, tasks
from worklists.delivery.projector import project_events
from worklists.ops import maintenance
from worklists.persistence import generations, ward_shifts
from worklists.persistence.view_rows import bucket_docs, delete_row, row_id_of
from worklists.projection.rows import MY_PATIENTS, SHIFT_BEDS
from worklists.read.my_patients import my_patients

pytestmark = [pytest.mark.service, pytest.mark.django_db]
SBAR = {"situation": "Stable", "background": "Pneumonia", "assessment": "Improving",
        "recommendation": "Wean oxygen"}


def _shift() -> Shift:
    return Shift.at(datetime.now(UTC), ShiftHours(), hospital_time_zone())


@pytest.fixture
def ward(his_store, drain_worklists) -> dict[str, str]:
    """Cardiology Ward A, admitted yesterday: A01 (no known allergies, a note from the last
    shift) and A02 for
    nurse n1, A03 for nurse n2, this shift."""
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    beds = {}
    for bed, family in (("A01", "Bedone"), ("A02", "Bedtwo"), ("A03", "Bedthree")):
        pid = data.register(his_store, family)
        with time_machine.travel(datetime.now(UTC) - timedelta(days=1)):
            data.admit(his_store, pid, "CARD", "CARD-A", bed)  # a stay the last shift saw
        beds[bed] = pid
    record_no_known_allergies(RecordNoKnownAllergies(beds["A01"]), UnitOfWork(his_store),
                              actor=SYSTEM_ACTOR)
    write_handover(WriteHandover(beds["A01"], SBAR, _shift().previous()),
                   UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    n1, n2 = Nurse("n1", "Nina One"), Nurse("n2", "Ned Two")
    assign_nurses(AssignNurses("CARD-A", _shift(), {"A01": n1, "A02": n1, "A03": n2}),
                  UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    drain_worklists()
    return beds


def _rows(store, gen: int) -> dict:
    docs = bucket_docs(store, gen, MY_PATIENTS, "CARD-A")
    return {row_id_of(d): {k: v for k, v in d["docContents"].items()
                      if k not in ("projectedAt", "seq")} for d in docs}


def _read(store, nurse: str) -> list[dict]:
    return my_patients(store, nurse, tz=hospital_time_zone()).rows


def test_it_lists_the_nurses_beds_from_the_projected_rows(ward, his_store) -> None:
    a01, a02 = _read(his_store, "n1")
    assert (a01["bed"], a01["name"], a01["allergy"], a01["wardName"]) == (
        "A01", "BEDONE, Ann", "no_known_allergies", "Cardiology Ward A")
    assert a01["handover"]["id"] == _shift().previous().name
    assert (a01["late"], a01["unreadResults"], a01["nextDoseAt"]) == (0, 0, None)
    assert (a02["bed"], a02["allergy"], a02["handover"]) == ("A02", "unknown", None)
    assert [r["bed"] for r in _read(his_store, "n2")] == ["A03"]
    assert _read(his_store, "n3") == []


def test_an_acknowledged_note_leaves_the_row(ward, his_store, drain_worklists) -> None:
    acknowledge_handover(AcknowledgeHandover(ward["A01"], _shift().previous().name),
                         UnitOfWork(his_store), actor=Actor("n1", "nina", "Nina One"))
    drain_worklists()
    assert _read(his_store, "n1")[0]["handover"] is None


def test_a_redelivered_event_changes_no_row(ward, his_store) -> None:
    before = _rows(his_store, 1)
    assert set(before) == set(ward.values())
    for pid in ward.values():
        project_events(his_store, keys.patient(pid), [1, 2, 3, 4])
    assert _rows(his_store, 1) == before


def test_a_rebuild_writes_the_same_rows_and_the_check_agrees(ward, his_store) -> None:
    before, answer = _rows(his_store, 1), _read(his_store, "n1")
    call_command("rebuild_worklists")
    assert generations.pointer(his_store)["active"] == 2
    assert _rows(his_store, 2) == before
    assert _read(his_store, "n1") == answer
    assert maintenance.check(his_store, list(maintenance.patient_ids(his_store))).drifted == {}


# ------------------------------------------------------------------ the relay's path


def _no_record_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the page read per row before the views held it: now a failure."""
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("My patients read the record, not its views")

    for module, name in ((assignments, "read_sheet"), (assignments, "load"),
                         (queries, "patient"), (handovers, "latest"),
                         (handovers, "of_shift")):
        monkeypatch.setattr(module, name, refuse)


def _shift_rows(store, gen: int) -> dict:
    docs = bucket_docs(store, gen, SHIFT_BEDS, "CARD-A")
    return {row_id_of(d): {k: v for k, v in d["docContents"].items()
                      if k not in ("projectedAt", "seq")} for d in docs}


def test_the_relays_pages_project_names_takeovers_and_assignments(
        his_store, monkeypatch: pytest.MonkeyPatch) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    after: dict = {}
    relay_page(his_store, after)  # the reference data's events: not this test's
    ward_stream = ward_pk("CARD-A")
    a01, a02 = data.register(his_store, "Ñúñez"), data.register(his_store, "Öberg")
    with time_machine.travel(datetime.now(UTC) - timedelta(days=1)):
        data.admit(his_store, a01, "CARD", "CARD-A", "A01")
        data.admit(his_store, a02, "CARD", "CARD-A", "A02")
    for substance, severity in (("Pénicilline", "mild"), ("Latex ‘natural’", "severe")):
        add_allergy(AddAllergy(a01, substance=substance, severity=severity),
                    UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    last = _shift().previous()
    write_handover(WriteHandover(a01, SBAR, last), UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    acknowledge_handover(AcknowledgeHandover(a01, last.name), UnitOfWork(his_store),
                         actor=Actor("n1", "nina", "Nina Ó Briain"))
    n1, n2 = Nurse("n1", "Nina Ó Briain"), Nurse("n2", "Ned Two")
    assign_nurses(AssignNurses("CARD-A", _shift(), {"A01": n1, "A02": n1}),
                  UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    first = relay_page(his_store, after)
    # the ward's stream goes in the same message, its nurses' event alone
    assert dict(first)[ward_stream] == [stream_head(his_store, ward_stream)]
    assert tasks.apply_page(his_store, first).endswith("0 sent on alone")

    _no_record_reads(monkeypatch)
    rows = _read(his_store, "n1")
    assert [(r["bed"], r["allergyNames"], r["handoverTaken"]) for r in rows] == [
        ("A01", ["Latex ‘natural’", "Pénicilline"], "Nina Ó Briain"), ("A02", [], None)]
    assert _read(his_store, "n2") == []

    monkeypatch.undo()
    assign_nurses(AssignNurses("CARD-A", _shift(), {"A01": n1, "A02": n2}),
                  UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    second = relay_page(his_store, after)
    tasks.apply_page(his_store, second)
    _no_record_reads(monkeypatch)
    assert [r["bed"] for r in _read(his_store, "n1")] == ["A01"]
    assert [r["bed"] for r in _read(his_store, "n2")] == ["A02"]
    rows = _shift_rows(his_store, 1)
    # Delivered again, and the first page after the second (at least once, any order):
    # the shift stays as its latest event says.
    tasks.apply_page(his_store, second)
    tasks.apply_page(his_store, first)
    assert _shift_rows(his_store, 1) == rows
    assert [r["bed"] for r in _read(his_store, "n2")] == ["A02"]


def test_a_rebuild_writes_the_same_shift_rows_and_drops_the_old_ones(ward, his_store) -> None:
    before = _shift_rows(his_store, 1)
    assert set(before) == {_shift().name}
    assert before[_shift().name]["beds"]["A03"] == {"nurseId": "n2", "nurseName": "Ned Two"}
    call_command("rebuild_worklists")
    assert _shift_rows(his_store, 2) == before
    assert _shift_rows(his_store, 1) == {}  # the retired generation's are gone
    assert [r["bed"] for r in _read(his_store, "n1")] == ["A01", "A02"]


def test_the_check_names_a_drifted_shift_row_and_repairs_it(ward, his_store) -> None:
    ids = list(maintenance.patient_ids(his_store))
    assert maintenance.check(his_store, ids).drifted == {}
    delete_row(his_store, 1, (SHIFT_BEDS, "CARD-A", _shift().name))
    assert _read(his_store, "n1") == []
    report = maintenance.check(his_store, ids, repair=True)
    assert report.drifted == {"ward CARD-A": [f"missing ShiftBeds row {_shift().name}"]}
    assert [r["bed"] for r in _read(his_store, "n1")] == ["A01", "A02"]
    assert maintenance.check(his_store, ids).drifted == {}


def test_a_starting_relay_fills_the_shift_rows_an_upgraded_store_lacks(ward, his_store) -> None:
    rows = _shift_rows(his_store, 1)
    delete_row(his_store, 1, (SHIFT_BEDS, "CARD-A", _shift().name))  # as before this release
    assert _read(his_store, "n1") == []
    assert "shift-rows" in consumers._sweepers  # started beside every relay
    catch_up.start_thread().stop()
    assert _shift_rows(his_store, 1) == rows
    assert [r["bed"] for r in _read(his_store, "n1")] == ["A01", "A02"]
    assert ward_shifts.catch_up(his_store) == 0  # then nothing changes
