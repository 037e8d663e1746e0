"""Projection rules without Celery or a store: fold, source rebuild, version guard, rows;
and which events the relay sends to the projections (a fake broker)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hisadmin.core import consumers
from patients.domain.events import ORDER_PLACED, EventType
from tests.unit.worklist_events import T0, History, source_args
from worklists.delivery.relay import consumer_publisher
from worklists.delivery.tasks import PAGE_TASK, QUEUE
from worklists.persistence.feed import EventRef
from worklists.projection.census import CENSUS
from worklists.projection.due import doses_due
from worklists.projection.rows import (
    ADMITTED,
    BIRTHS,
    MEDS_DUE,
    MY_ORDERS,
    MY_PATIENTS,
    NAMES,
    OBS_DUE,
    ORDERS,
    REVIEWS,
    name_bucket,
    next_dose_time,
    rows_for,
)
from worklists.projection.rows import fold as fold_text
from worklists.projection.rules import fold, from_source, step
from worklists.projection.state import PatientState


def fold_all(events: list[dict]) -> PatientState:
    state = PatientState("p1")
    for event in events:
        state = fold(state, event)
    return state


def history(seed: int, length: int) -> History:
    rnd = random.Random(seed)
    h = History()
    h.register()
    for _ in range(length):
        h.random_command(rnd)
    return h


def test_it_lists_an_admitted_patient_in_census_search_my_patients_and_no_order_views(
        ) -> None:
    h = History()
    h.register()
    h._admit(random.Random(1))
    rows = rows_for(fold_all(h.events))
    views = sorted(k[0] for k in rows)
    assert views == [ADMITTED, BIRTHS, CENSUS, MY_PATIENTS, NAMES, OBS_DUE]
    census = next(r for r in rows.values() if r.view == ADMITTED)
    assert census.contents["name"] == "IBÁÑEZ, Inés"
    assert census.query["QueryName"] == "IBANEZ INES"
    assert census.bucket == census.contents["departmentId"]


def test_it_puts_an_assigned_order_in_active_and_my_orders_and_drops_it_when_done() -> None:
    h = History()
    h.register()
    rnd = random.Random(2)
    h._admit(rnd)
    h._prescribe(rnd)
    h.add(EventType.ORDER_ASSIGNED, {"orderId": "o0", "assigneeId": "8", "assigneeName": "N"})
    rows = rows_for(fold_all(h.events))
    assert {(k[0], k[1]) for k in rows if k[0] in (ORDERS, MY_ORDERS)} == {
        (ORDERS, "CARD"), (MY_ORDERS, "8")}
    h.add(EventType.ORDER_COMPLETED, {"orderId": "o0"})
    assert not [k for k in rows_for(fold_all(h.events)) if k[0] in (ORDERS, MY_ORDERS)]


def test_it_removes_census_and_orders_on_discharge() -> None:
    h = history(3, 0)
    rnd = random.Random(3)
    h._admit(rnd)
    h._prescribe(rnd)
    h._discharge(rnd)
    # the midnight census keeps the stay, ended, in its ward-month
    assert [k[0] for k in rows_for(fold_all(h.events))] == [NAMES, BIRTHS, CENSUS]


def test_it_rebuilds_from_source_on_an_unknown_event_type() -> None:
    h = history(4, 3)
    truth = fold_all(h.events)
    event = {"seq": truth.seq + 1, "type": "SomethingNew", "data": {}}
    source = PatientState("p1", seq=truth.seq + 1, patient=truth.patient)
    state, outcome = step(truth, event, lambda: source)
    assert (state, outcome) == (source, "rebuilt")


def test_it_buckets_names_by_their_first_two_folded_letters() -> None:
    assert name_bucket(fold_text("Ñúñez")) == "NU"
    assert name_bucket(fold_text("O")) == "O_"
    assert name_bucket(fold_text("d'Arcy")) == "D_"


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(0, 25))
def test_it_builds_the_same_state_from_the_source_record_as_from_events(seed: int,
                                                                      length: int) -> None:
    truth = fold_all(history(seed, length).events)
    assert from_source("p1", truth.seq, *source_args(truth)) == truth


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(0, 25), data=st.data())
def test_it_converges_to_in_order_views_whatever_the_delivery(seed: int, length: int,
                                                              data: st.DataObject) -> None:
    """Shuffled, duplicated deliveries interleaved with commits give the in-order views."""
    events = history(seed, length).events
    n = len(events)
    order = data.draw(st.permutations(range(n)))
    dupes = data.draw(st.lists(st.integers(0, n - 1), max_size=n))
    deliveries = list(order) + dupes
    data.draw(st.randoms()).shuffle(deliveries)
    committed = 0
    state = PatientState("p1")
    for i in deliveries:
        committed = max(committed, i + 1)  # an event is relayed only once committed
        state, _ = step(state, events[i],
                        lambda n=committed: from_source("p1", n, *source_args(fold_all(events[:n]))))
    truth = fold_all(events)
    assert state == truth
    assert rows_for(state) == rows_for(truth)


def test_it_sends_every_patient_event_to_the_projections_by_id_only() -> None:
    sent: list[tuple[str, dict]] = []
    publish = consumer_publisher(lambda name, **options: sent.append((name, options)))
    publish([EventRef("P_p1", 4, EventType.ALLERGY_ADDED, written_at=None)])
    publish([EventRef("R_Ward", 2, "ReferenceEntryAdded", written_at=None)])
    assert [(name, options) for name, options in sent if name == PAGE_TASK] == [
        (PAGE_TASK, {"args": [[["P_p1", [4]]]], "queue": QUEUE, "retry": False})]


def test_a_page_sends_one_message_with_each_patients_events_in_order() -> None:
    sent: list[tuple[str, dict]] = []
    publish = consumer_publisher(lambda name, **options: sent.append((name, options)))
    publish([EventRef("P_p1", 4, EventType.ALLERGY_ADDED, written_at=None),
             EventRef("P_p2", 1, EventType.PATIENT_REGISTERED, written_at=None),
             EventRef("R_Ward", 2, "ReferenceEntryAdded", written_at=None),
             EventRef("P_p1", 5, EventType.ALLERGY_REMOVED, written_at=None),
             EventRef("P_p1", 6, EventType.ALLERGY_ADDED, written_at=None)])
    assert [options["args"] for name, options in sent if name == PAGE_TASK] == [
        [[["P_p1", [4, 5, 6]], ["P_p2", [1]]]]]


# ------------------------------------------------------------------ medications due, reviews
def _scheduled(h: History, *, hours: float = 8, start: str = "2026-01-05T08:00:00+00:00",
               prn: bool = False, order_id: str = "m1") -> None:
    h.add(ORDER_PLACED["medication"], {
        "orderId": order_id, "admissionId": h.admission, "urgency": "routine",
        "description": "Amoxicillin 1 g PO Q8H", "departmentId": "CARD", "wardId": "CARD-1",
        "placedAt": start, "placedBy": "7", "medicationName": "Amoxicillin", "dose": "1",
        "unit": "g", "route": "PO", "startAt": start, "endAt": None, "frequencyHours": hours,
        "asNeeded": prn})


def _admitted() -> History:
    h = History()
    h.register()
    h._admit(random.Random(1))
    return h


def test_a_scheduled_medication_has_a_ward_row_at_its_first_open_dose_time() -> None:
    h = _admitted()
    _scheduled(h)
    _scheduled(h, prn=True, order_id="m2")
    [row] = [r for r in rows_for(fold_all(h.events)).values() if r.view == MEDS_DUE]
    assert row.row_id == "m1" and row.bucket == fold_all(h.events).admission["wardId"]
    assert row.query["QueryNextDue"] == "2026-01-05T08:00:00+00:00"
    h.add(EventType.MEDICATION_ADMINISTERED, {"orderId": "m1", "status": "given",
                                              "scheduledFor": "2026-01-05T08:00:00+00:00"})
    h.add(EventType.MEDICATION_NOT_GIVEN, {"orderId": "m1", "status": "not_given",
                                           "scheduledFor": "2026-01-05T16:00:00+00:00"})
    [row] = [r for r in rows_for(fold_all(h.events)).values() if r.view == MEDS_DUE]
    assert row.query["QueryNextDue"] == "2026-01-06T00:00:00+00:00"
    assert row.contents["recorded"] == ["2026-01-05T08:00:00+00:00",
                                        "2026-01-05T16:00:00+00:00"]


def test_a_once_only_dose_given_leaves_the_list_and_so_does_a_completed_order() -> None:
    h = _admitted()
    _scheduled(h, hours=0)
    assert next_dose_time(fold_all(h.events).orders["m1"]) == "2026-01-05T08:00:00+00:00"
    h.add(EventType.MEDICATION_ADMINISTERED, {"orderId": "m1",
                                              "scheduledFor": "2026-01-05T08:00:00+00:00"})
    assert not [k for k in rows_for(fold_all(h.events)) if k[0] == MEDS_DUE]
    _scheduled(h, order_id="m3")
    h.add(EventType.ORDER_COMPLETED, {"orderId": "m3"})
    assert not [k for k in rows_for(fold_all(h.events)) if k[0] == MEDS_DUE]


def test_the_open_dose_times_near_now_follow_the_mar_rules() -> None:
    h = _admitted()
    _scheduled(h, hours=4)
    h.add(EventType.MEDICATION_ADMINISTERED, {"orderId": "m1",
                                              "scheduledFor": "2026-01-05T12:00:00+00:00"})
    [row] = [r for r in rows_for(fold_all(h.events)).values() if r.view == MEDS_DUE]
    now = datetime(2026, 1, 5, 15, 40, tzinfo=UTC)
    doses = doses_due(row.contents, now, UTC)
    # 08:00 late, 12:00 answered, 16:00 due (from 15:30), 20:00 beyond the hour
    assert [(d["scheduledFor"][11:16], d["doseStatus"]) for d in doses] == [
        ("08:00", "late"), ("16:00", "due")]
    assert [d["doseStatus"] for d in doses_due(row.contents,
                                               datetime(2026, 1, 5, 19, 5, tzinfo=UTC), UTC)
            ] == ["late", "late", "upcoming"]  # 08:00, 16:00; 20:00 within the hour
    # yesterday's open times are missed, not listed; the window crosses midnight
    late_evening = doses_due(row.contents, datetime(2026, 1, 6, 23, 30, tzinfo=UTC), UTC)
    assert [d["scheduledFor"][:16] for d in late_evening][-1] == "2026-01-07T00:00"


def test_results_wait_in_the_ordering_clinicians_list_until_acknowledged() -> None:
    h = _admitted()
    h.add(ORDER_PLACED["lab"], {"orderId": "l1", "admissionId": h.admission,
                                "urgency": "routine", "description": "CBC",
                                "departmentId": "CARD", "wardId": "CARD-1", "placedAt": T0,
                                "placedBy": "7"})
    h.add(EventType.ORDER_COMPLETED, {"orderId": "l1", "status": "completed"})
    h.add(EventType.RESULTS_RECORDED, {
        "orderId": "l1", "placedBy": "7", "kind": "lab", "description": "CBC",
        "flags": {"abnormal": True, "high": ["PLT"], "low": []},
        "results": {"resultedAt": "2026-01-05T09:00:00+00:00", "resultedByName": "Lab"}})
    h._discharge(random.Random(1))
    [row] = [r for r in rows_for(fold_all(h.events)).values() if r.view == REVIEWS]
    assert (row.bucket, row.row_id, row.query["QueryAbnormal"]) == ("7", "l1", 1)
    assert row.contents["wardId"] is None  # discharged: results still to review
    h.add(EventType.RESULT_ACKNOWLEDGED, {"orderId": "l1", "placedBy": "7"})
    assert not [k for k in rows_for(fold_all(h.events)) if k[0] == REVIEWS]


def test_a_tracker_of_an_older_shape_is_rebuilt_from_source_not_folded() -> None:
    h = _admitted()
    truth = fold_all(h.events)
    old = PatientState.from_json({k: v for k, v in truth.as_json().items()
                                  if k not in ("shape", "reviews")})
    assert old.shape == 1
    event = {"seq": truth.seq + 1, "type": EventType.DEMOGRAPHICS_UPDATED,
             "data": {"familyName": "Smith"}}
    source = replace(truth, seq=truth.seq + 1)
    assert step(old, event, lambda: source) == (source, "rebuilt")
    assert step(truth, event, lambda: source)[1] == "applied"


def test_a_gated_consumer_is_asked_once_per_page_and_gets_nothing_while_closed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    gate_open = [False]

    def gate() -> bool:
        asked.append(1)
        return gate_open[0]

    monkeypatch.setattr(consumers, "_consumers", [
        consumers.Consumer("t.always", "q", "P_"), consumers.Consumer("t.gated", "q", "P_",
                                                                      gate=gate)])
    sent: list[tuple[str, list]] = []
    publish = consumer_publisher(lambda name, **options: sent.append((name, options["args"])))
    page = [EventRef("P_p1", 1, EventType.PATIENT_REGISTERED, written_at=None),
            EventRef("P_p2", 1, EventType.PATIENT_REGISTERED, written_at=None)]
    publish(page)
    assert sent == [("t.always", ["P_p1", [1]]), ("t.always", ["P_p2", [1]])]
    assert len(asked) == 1
    sent.clear()
    gate_open[0] = True
    publish(page)
    assert sorted(sent) == [("t.always", ["P_p1", [1]]), ("t.always", ["P_p2", [1]]),
                            ("t.gated", ["P_p1", [1]]), ("t.gated", ["P_p2", [1]])]
    assert len(asked) == 2


def test_a_review_row_names_its_abnormal_values_in_words_from_the_event() -> None:
    h = _admitted()
    h.add(ORDER_PLACED["lab"], {"orderId": "l2", "admissionId": h.admission,
                                "urgency": "routine", "description": "BMP",
                                "departmentId": "CARD", "wardId": "CARD-1", "placedAt": T0,
                                "placedBy": "7"})
    h.add(EventType.ORDER_COMPLETED, {"orderId": "l2", "status": "completed"})
    values = [{"analyte": "NA", "name": "Sodium", "value": 128, "text": "128",
               "unitName": "mmol/L", "flag": "L"},
              {"analyte": "K", "name": "Potassium", "value": 5, "text": "5.0",
               "unitName": "mmol/L", "flag": None},
              {"analyte": "UREA", "name": "Urea", "value": 9.1, "text": "9.10",
               "unitName": "mmol/L", "flag": "H"}]
    h.add(EventType.RESULTS_RECORDED, {
        "orderId": "l2", "placedBy": "7", "kind": "lab", "description": "BMP",
        "flags": {"abnormal": True, "high": ["UREA"], "low": ["NA"]},
        "results": {"values": values, "resultedAt": "2026-01-05T09:00:00+00:00",
                    "resultedByName": "Lab"}})
    [row] = [r for r in rows_for(fold_all(h.events)).values() if r.view == REVIEWS]
    assert row.contents["abnormalValues"] == ["Urea 9.10 mmol/L, high",
                                              "Sodium 128 mmol/L, low"]
