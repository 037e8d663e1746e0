"""My patients' rows from a patient's events, pure: bed, name, allergy flag and names,
medication courses, unread results, open handover notes and who took over the recent ones;
a ward's shift rows from its events; and their reading on the clock."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from patients.domain.events import ORDER_PLACED, EventType
from patients.domain.shifts import Shift, ShiftHours
from tests.unit.worklist_events import T0, History, source_record
from worklists.projection.rows import MY_PATIENTS, SHIFT_BEDS, rows_for, shift_row
from worklists.projection.rules import from_source, step
from worklists.projection.state import SHAPE, PatientState, Row
from worklists.read.my_patients import present

WARD = {"code": "CARD-1", "name": "Cardiology 1"}


def _no_source() -> PatientState:
    raise AssertionError("every event folds: none needs the source record")


def _fold(events: list[dict[str, Any]]) -> PatientState:
    state = PatientState("p1")
    for event in events:
        state, outcome = step(state, event, _no_source)
        assert outcome == "applied"
    return state


def _admitted() -> History:
    h = History()
    h.register()
    h.add(EventType.ADMISSION_STARTED, {
        "admissionId": "a1", "departmentId": "CARD", "wardId": "CARD-1", "bed": "B3",
        "attendingId": "7", "attendingName": "Dr Who", "reason": "r", "startedAt": T0})
    return h


def _row(h: History) -> Row:
    [row] = [r for r in rows_for(_fold(h.events)).values() if r.view == MY_PATIENTS]
    return row


def _note(shift: str, by: str = "Nina Nurse") -> dict[str, Any]:
    return {"handoverId": shift, "shift": shift, "wardId": "CARD-1", "bed": "B3",
            "situation": "s", "background": "b", "assessment": "a", "recommendation": "r",
            "writtenAt": T0, "writtenBy": "n1", "writtenByName": by, "acknowledgedAt": None}


def test_it_puts_a_patient_in_a_bed_in_the_wards_bucket_indexed_by_bed() -> None:
    row = _row(_admitted())
    assert (row.bucket, row.row_id, row.query["QueryBed"]) == ("CARD-1", "p1", "B3")
    assert row.contents | {"doses": None} == {
        "patientId": "p1", "wardId": "CARD-1", "bed": "B3", "name": "IBÁÑEZ, Inés",
        "allergy": "unknown", "allergyNames": [], "taken": {}, "doses": None,
        "unreadResults": 0, "handovers": [], "news2": None}


def test_it_has_no_row_without_a_bed_or_after_discharge() -> None:
    h = History()
    h.register()
    h.add(EventType.ADMISSION_STARTED, {
        "admissionId": "a1", "departmentId": "CARD", "wardId": "CARD-1", "bed": None,
        "attendingId": "7", "attendingName": "Dr Who", "reason": "r", "startedAt": T0})
    assert not [k for k in rows_for(_fold(h.events)) if k[0] == MY_PATIENTS]
    h = _admitted()
    h.add(EventType.ADMISSION_ENDED, {"admissionId": "a1", "disposition": "home",
                                      "endedAt": T0})
    assert not [k for k in rows_for(_fold(h.events)) if k[0] == MY_PATIENTS]


def test_it_follows_the_allergy_flag_through_its_events() -> None:
    h = _admitted()
    h.add(EventType.NO_KNOWN_ALLERGIES_RECORDED, {"recordedAt": T0, "recordedBy": "7"})
    assert _row(h).contents["allergy"] == "no_known_allergies"
    h.add(EventType.ALLERGY_ADDED, {"allergyId": "al1", "substance": "Penicillin",
                                    "severity": "mild", "status": "active"})
    h.add(EventType.ALLERGY_ADDED, {"allergyId": "al2", "substance": "Łatex (natural rubber)",
                                    "severity": "severe", "status": "active"})
    assert _row(h).contents["allergy"] == "has_allergies"
    # named as the chart's banner lists them: severe first
    assert _row(h).contents["allergyNames"] == ["Łatex (natural rubber)", "Penicillin"]
    for allergy_id, substance in (("al1", "Penicillin"), ("al2", "Łatex (natural rubber)")):
        h.add(EventType.ALLERGY_REMOVED, {"allergyId": allergy_id, "substance": substance,
                                          "reason": "entered-in-error"})
    assert _row(h).contents["allergy"] == "unknown"  # adding one ended "no known allergies"
    assert _row(h).contents["allergyNames"] == []


def test_it_keeps_open_handover_notes_until_acknowledged() -> None:
    h = _admitted()
    h.add(EventType.HANDOVER_WRITTEN, _note("2026-01-04-night"))
    h.add(EventType.HANDOVER_WRITTEN, _note("2026-01-05-day", by="Day Nurse"))
    assert [n["handoverId"] for n in _row(h).contents["handovers"]] == [
        "2026-01-05-day", "2026-01-04-night"]
    h.add(EventType.HANDOVER_ACKNOWLEDGED, {
        "handoverId": "2026-01-04-night", "shift": "2026-01-04-night", "acknowledgedAt": T0,
        "acknowledgedBy": "n2", "acknowledgedByName": "Ned"})
    assert _row(h).contents["handovers"] == [
        {"handoverId": "2026-01-05-day", "shift": "2026-01-05-day",
         "writtenByName": "Day Nurse"}]
    assert _row(h).contents["taken"] == {"2026-01-04-night": "Ned"}


def test_it_names_who_took_over_the_newest_notes_and_the_reader_the_right_one() -> None:
    h = _admitted()
    for day in range(1, 7):
        shift = f"2026-01-0{day}-night"
        h.add(EventType.HANDOVER_WRITTEN, _note(shift))
        h.add(EventType.HANDOVER_ACKNOWLEDGED, {
            "handoverId": shift, "shift": shift, "acknowledgedAt": T0, "acknowledgedBy": "n2",
            "acknowledgedByName": f"Ned {day}"})
    row = _row(h).contents
    assert row["taken"] == {f"2026-01-0{d}-night": f"Ned {d}" for d in (6, 5, 4, 3)}
    day_shift = Shift.at(datetime(2026, 1, 7, 9, 0, tzinfo=UTC), ShiftHours(), UTC)
    now = datetime(2026, 1, 7, 9, 0, tzinfo=UTC)
    seen = present(row, WARD, day_shift, now, UTC)
    assert (seen["handover"], seen["handoverTaken"]) == (None, "Ned 6")  # last night's
    later = Shift.at(datetime(2026, 1, 8, 9, 0, tzinfo=UTC), ShiftHours(), UTC)
    assert present(row, WARD, later, now, UTC)["handoverTaken"] is None  # none of late


def test_it_counts_results_not_yet_acknowledged() -> None:
    h = _admitted()
    h.add(ORDER_PLACED["lab"], {
        "orderId": "o9", "admissionId": "a1", "urgency": "routine", "description": "FBC",
        "departmentId": "CARD", "wardId": "CARD-1", "placedAt": T0, "placedBy": "7"})
    h.orders["o9"] = "lab"
    h._result(random.Random(1))
    assert _row(h).contents["unreadResults"] == 1
    h._acknowledge(random.Random(1))
    assert _row(h).contents["unreadResults"] == 0


def test_the_source_record_builds_the_same_row_as_the_events() -> None:
    h = _admitted()
    h.add(EventType.ALLERGY_ADDED, {"allergyId": "al1", "substance": "x", "severity": "mild"})
    h.add(EventType.HANDOVER_WRITTEN, _note("2026-01-04-day"))
    h.add(EventType.HANDOVER_ACKNOWLEDGED, {
        "handoverId": "2026-01-04-day", "shift": "2026-01-04-day", "acknowledgedAt": T0,
        "acknowledgedBy": "n2", "acknowledgedByName": "Ned Ó Dúill"})
    h.add(EventType.HANDOVER_WRITTEN, _note("2026-01-05-day"))
    folded = _fold(h.events)
    patient, admissions, orders = source_record(folded)
    built = from_source("p1", folded.seq, patient, admissions, orders,
                        handovers=[_note("2026-01-05-day"),
                                   {**_note("2026-01-04-day"), "acknowledgedAt": T0,
                                    "acknowledgedBy": "n2",
                                    "acknowledgedByName": "Ned Ó Dúill"}])
    assert built == folded and built.shape == SHAPE
    assert rows_for(built) == rows_for(folded)


def test_a_scheduled_dose_is_next_then_late_on_the_clock_and_the_note_to_take_over() -> None:
    h = _admitted()
    h.add(ORDER_PLACED["medication"], {
        "orderId": "o1", "admissionId": "a1", "urgency": "routine",
        "description": "Amoxicillin 500 mg PO", "departmentId": "CARD", "wardId": "CARD-1",
        "placedAt": T0, "placedBy": "7", "medicationName": "Amoxicillin", "dose": "500",
        "unit": "mg", "route": "PO", "startAt": "2026-01-05T08:00:00+00:00", "endAt": None,
        "frequencyHours": 4, "asNeeded": False})
    h.add(EventType.HANDOVER_WRITTEN, _note("2026-01-04-night", by="Night Nurse"))
    row = _row(h).contents
    shift = Shift.at(datetime(2026, 1, 5, 7, 50, tzinfo=UTC), ShiftHours(), UTC)
    early = present(row, WARD, shift, datetime(2026, 1, 5, 7, 50, tzinfo=UTC), UTC)
    assert (early["nextDoseAt"], early["late"], early["nextDose"]) == (
        "2026-01-05T08:00:00+00:00", 0, "Amoxicillin 500 mg PO")
    assert early["handover"] == {"id": "2026-01-04-night", "shift": "2026-01-04-night",
                                 "by": "Night Nurse"}
    later = present(row, WARD, shift, datetime(2026, 1, 5, 12, 50, tzinfo=UTC), UTC)
    assert later["late"] == 1 and later["nextDoseAt"] == "2026-01-05T12:00:00+00:00"
    assert (later["wardName"], later["bed"], later["hasAllergies"]) == ("Cardiology 1", "B3",
                                                                       False)


def test_a_wards_shift_row_is_the_whole_shift_its_event_names() -> None:
    row = shift_row("CARD-1", "2026-01-05-day", {
        "B3": {"nurseId": "12", "nurseName": "Zoë Ní Bhriain"}, "B1": {"nurseId": "7"},
        "B2": None})
    assert (row.view, row.bucket, row.row_id, row.query) == (
        SHIFT_BEDS, "CARD-1", "2026-01-05-day", {})
    assert row.contents["beds"] == {"B1": {"nurseId": "7", "nurseName": "7"},
                                    "B3": {"nurseId": "12", "nurseName": "Zoë Ní Bhriain"}}
