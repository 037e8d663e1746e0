"""The midnight census, pure: stays folded from admission events, their rows, the days."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from patients.domain.events import EventType
from patients.domain.records import Admission, AdmissionStatus
from worklists.projection.census import (
    CENSUS,
    beds_by_day,
    census_days,
    census_rows,
    follow,
    month_buckets,
    stays_of,
)
from worklists.projection.rows import rows_for
from worklists.projection.rules import step
from worklists.projection.state import PatientState

BERLIN = ZoneInfo("Europe/Berlin")
PATIENT = {"mrn": "H0000001", "givenName": "Inés", "familyName": "Ibáñez",
           "birthDate": "1970-02-03", "sex": "female"}


def event(seq: int, etype: EventType, data: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "type": etype, "data": data, "stream": "P_p1"}


def admitted(at: str, ward: str = "W1", admission: str = "a1") -> dict[str, Any]:
    return {"admissionId": admission, "departmentId": "MED", "wardId": ward, "bed": "1",
            "attendingId": "7", "attendingName": "Dr Who", "reason": "r", "startedAt": at}


def moved(at: str, ward: str, admission: str = "a1") -> dict[str, Any]:
    return {"admissionId": admission, "at": at, "fromWard": "W1", "fromBed": "1",
            "toWard": ward, "toBed": "2", "toDepartment": "MED", "by": "clerk"}


def ended(at: str, admission: str = "a1") -> dict[str, Any]:
    return {"admissionId": admission, "disposition": "home", "endedAt": at, "wardId": "W2",
            "bed": "2"}


def stays_after(*steps: tuple[EventType, dict[str, Any]]) -> list[dict[str, Any]]:
    stays: list[dict[str, Any]] = []
    for etype, data in steps:
        stays = follow(stays, etype, data)
    return stays


def test_it_opens_a_stay_on_admission_and_counts_it_at_each_midnight() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")))
    assert stays == [{"admissionId": "a1", "wardId": "W1", "since": "2026-01-05T10:00:00+00:00",
                      "until": None, "arrived": "admission", "left": None}]
    days = census_days(stays, date(2026, 1, 4), date(2026, 1, 7), BERLIN, beds=4)
    assert [(d.day.day, d.at_start, d.admissions, d.at_midnight) for d in days] == [
        (4, 0, 0, 0), (5, 0, 1, 1), (6, 1, 0, 1), (7, 1, 0, 1)]
    assert days[1].occupancy == 25.0


def test_it_counts_a_transfer_out_of_one_ward_and_into_the_other() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")),
                        (EventType.PATIENT_TRANSFERRED, moved("2026-01-06T09:00:00+00:00", "W2")))
    w1 = census_days([s for s in stays if s["wardId"] == "W1"], date(2026, 1, 5),
                     date(2026, 1, 6), BERLIN, beds=2)
    w2 = census_days([s for s in stays if s["wardId"] == "W2"], date(2026, 1, 5),
                     date(2026, 1, 6), BERLIN, beds=2)
    assert [(d.admissions, d.transfers_out, d.at_midnight) for d in w1] == [(1, 0, 1), (0, 1, 0)]
    assert [(d.transfers_in, d.at_midnight) for d in w2] == [(0, 0), (1, 1)]


def test_a_bed_move_on_the_same_ward_is_the_same_stay() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")),
                        (EventType.PATIENT_TRANSFERRED, moved("2026-01-06T09:00:00+00:00", "W1")))
    assert len(stays) == 1 and stays[0]["until"] is None


def test_it_counts_a_discharge_and_leaves_the_patient_out_of_that_midnight() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")),
                        (EventType.ADMISSION_ENDED, ended("2026-01-07T11:00:00+00:00")))
    days = census_days(stays, date(2026, 1, 6), date(2026, 1, 8), BERLIN, beds=1)
    assert [(d.at_start, d.discharges, d.at_midnight) for d in days] == [
        (1, 0, 1), (1, 1, 0), (0, 0, 0)]


def test_a_midnight_still_to_come_has_no_count() -> None:
    """At 13:47 on the 6th (Berlin) the 6th has begun but not ended; the 7th not begun."""
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")))
    now = datetime(2026, 1, 6, 13, 47, tzinfo=BERLIN)
    days = census_days(stays, date(2026, 1, 5), date(2026, 1, 7), BERLIN, beds=4, now=now)
    assert [(d.at_start, d.at_midnight, d.occupancy, d.pending) for d in days] == [
        (0, 1, 25.0, False), (1, None, None, True), (None, None, None, True)]
    just_after = datetime(2026, 1, 7, 0, 0, tzinfo=BERLIN)
    assert census_days(stays, date(2026, 1, 6), date(2026, 1, 6), BERLIN, beds=4,
                       now=just_after)[0].at_midnight == 1


def test_each_day_counts_the_beds_of_its_own_midnight() -> None:
    """Added with 10 beds on the 1st, 12 from 14:00 on the 5th (Berlin), 8 from the 8th."""
    versions = [
        {"at": "2026-01-01T08:00:00+00:00", "entry": {"beds": list(range(10))},
         "previous": None},
        {"at": "2026-01-05T13:00:00+00:00", "entry": {"beds": list(range(12))},
         "previous": {"beds": list(range(10))}},
        {"at": "2026-01-08T09:00:00+00:00", "entry": {"beds": list(range(8))},
         "previous": {"beds": list(range(12))}},
    ]
    now = datetime(2026, 1, 8, 12, 0, tzinfo=BERLIN)
    beds = beds_by_day(versions, date(2025, 12, 30), date(2026, 1, 9), BERLIN, now, 8)
    assert [beds[date(2025, 12, 30)], beds[date(2026, 1, 4)], beds[date(2026, 1, 5)],
            beds[date(2026, 1, 7)], beds[date(2026, 1, 8)], beds[date(2026, 1, 9)]] == [
        10, 10, 12, 12, 8, 8]  # before it was added: its first count
    changed_later = versions[1:]  # loaded before the stream kept saves: what was replaced
    assert beds_by_day(changed_later, date(2026, 1, 2), date(2026, 1, 2), BERLIN, now, 8) == {
        date(2026, 1, 2): 10}
    assert beds_by_day([], date(2026, 1, 2), date(2026, 1, 2), BERLIN, now, 7) == {
        date(2026, 1, 2): 7}
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-03T10:00:00+00:00")))
    days = census_days(stays, date(2026, 1, 4), date(2026, 1, 5), BERLIN, beds)
    assert [(d.beds, d.occupancy) for d in days] == [(10, 10.0), (12, 8.3)]


def test_the_midnight_is_local_on_the_day_the_clocks_go_forward() -> None:
    """29 March 2026 in Berlin has 23 hours: it ends at 22:00 UTC, not at 23:00."""
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-03-29T22:30:00+00:00")),
                        (EventType.ADMISSION_ENDED, ended("2026-03-29T23:30:00+00:00",
                                                          admission="a1")))
    stays += stays_after((EventType.ADMISSION_STARTED,
                          admitted("2026-03-28T21:00:00+00:00", admission="a2")),
                         (EventType.ADMISSION_ENDED,
                          ended("2026-03-29T21:59:00+00:00", admission="a2")))
    days = census_days(stays, date(2026, 3, 28), date(2026, 3, 30), BERLIN, beds=10)
    # a1 came at 00:30 on the 30th (CEST); a2 left at 23:59 on the 29th.
    assert [(d.day.day, d.admissions, d.discharges, d.at_midnight) for d in days] == [
        (28, 1, 0, 1), (29, 0, 1, 0), (30, 1, 1, 0)]


def test_a_patient_who_came_and_went_the_same_day_is_not_in_its_midnight() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T08:00:00+00:00")),
                        (EventType.ADMISSION_ENDED, ended("2026-01-05T18:00:00+00:00")))
    [day] = census_days(stays, date(2026, 1, 5), date(2026, 1, 5), BERLIN, beds=1)
    assert (day.admissions, day.discharges, day.at_midnight) == (1, 1, 0)


def test_the_record_gives_the_same_stays_as_the_events() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")),
                        (EventType.PATIENT_TRANSFERRED, moved("2026-01-06T09:00:00+00:00", "W2")),
                        (EventType.ADMISSION_ENDED, ended("2026-01-09T11:00:00+00:00")))
    record = Admission(admission_id="a1", patient_id="p1", department_id="MED", ward_id="W2",
                       bed="2", attending_id="7", attending_name="Dr Who", reason="r",
                       started_at="2026-01-05T10:00:00+00:00",
                       status=AdmissionStatus.ENDED, ended_at="2026-01-09T11:00:00+00:00",
                       transfers=[moved("2026-01-06T09:00:00+00:00", "W2")])
    assert stays_of([record]) == stays


def test_an_ended_stay_has_a_row_in_each_month_it_overlaps_and_an_open_one_in_open() -> None:
    stays = stays_after((EventType.ADMISSION_STARTED, admitted("2026-01-30T10:00:00+00:00")),
                        (EventType.PATIENT_TRANSFERRED, moved("2026-03-02T09:00:00+00:00", "W2")))
    rows = census_rows(PatientState("p1", patient=PATIENT, stays=stays))
    assert sorted(r.bucket for r in rows) == ["W1_2026-01", "W1_2026-02", "W1_2026-03",
                                              "W2_open"]


def test_a_read_takes_the_utc_months_of_its_local_span_and_the_stays_going_on() -> None:
    start = datetime(2026, 2, 1, tzinfo=BERLIN)  # 31 January, 23:00 UTC
    end = datetime(2026, 3, 1, tzinfo=BERLIN)
    assert month_buckets("W1", start, end) == ["W1_2026-01", "W1_2026-02", "W1_open"]


def test_redelivery_changes_no_row() -> None:
    events = [event(1, EventType.PATIENT_REGISTERED, {"patientId": "p1", **PATIENT}),
              event(2, EventType.ADMISSION_STARTED, admitted("2026-01-05T10:00:00+00:00")),
              event(3, EventType.PATIENT_TRANSFERRED, moved("2026-01-06T09:00:00+00:00", "W2")),
              event(4, EventType.ADMISSION_ENDED, ended("2026-01-07T09:00:00+00:00"))]
    state = PatientState("p1")
    for e in events:
        state, _ = step(state, e, lambda: PatientState("p1"))
    before = rows_for(state)
    for e in [events[1], events[3], events[2], events[3]]:  # again, out of order
        again, outcome = step(state, e, lambda: PatientState("p1"))
        assert (again, outcome) == (state, "duplicate")
    assert rows_for(state) == before
    assert {k[1] for k in before if k[0] == CENSUS} == {"W1_2026-01", "W2_2026-01"}


def test_a_transfer_without_a_stay_going_on_rebuilds_from_the_record() -> None:
    state = PatientState("p1", seq=1, patient=PATIENT)
    rebuilt = PatientState("p1", seq=2, patient=PATIENT)
    result, outcome = step(state, event(2, EventType.PATIENT_TRANSFERRED,
                                        moved("2026-01-06T09:00:00+00:00", "W2")),
                           lambda: rebuilt)
    assert (result, outcome) == (rebuilt, "rebuilt")
