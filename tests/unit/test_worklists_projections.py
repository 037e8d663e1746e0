"""Projection rules without Celery or a store: fold, source rebuild, version guard, rows;
and which events the relay sends to the projections (a fake broker)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from patients.domain.events import EventType
from tests.unit.worklist_events import History, source_record
from worklists.delivery.relay import consumer_publisher
from worklists.delivery.tasks import QUEUE, TASK
from worklists.persistence.feed import EventRef
from worklists.projection.rows import ADMITTED, MY_ORDERS, NAMES, ORDERS, name_bucket, rows_for
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


def test_it_lists_an_admitted_patient_in_census_search_and_no_order_views() -> None:
    h = History()
    h.register()
    h._admit(random.Random(1))
    rows = rows_for(fold_all(h.events))
    views = sorted(k[0] for k in rows)
    assert views == [ADMITTED, NAMES]
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
    assert [k[0] for k in rows_for(fold_all(h.events))] == [NAMES]


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
    assert from_source("p1", truth.seq, *source_record(truth)) == truth


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
                        lambda n=committed: from_source("p1", n, *source_record(fold_all(events[:n]))))
    truth = fold_all(events)
    assert state == truth
    assert rows_for(state) == rows_for(truth)


def test_it_sends_every_patient_event_to_the_projections_by_id_only() -> None:
    sent: list[tuple[str, dict]] = []
    publish = consumer_publisher(lambda name, **options: sent.append((name, options)))
    publish(EventRef("P_p1", 4, EventType.ALLERGY_ADDED, written_at=None))
    publish(EventRef("R_Ward", 2, "ReferenceEntryAdded", written_at=None))
    assert [(name, options) for name, options in sent if name == TASK] == [
        (TASK, {"args": ["P_p1", 4], "queue": QUEUE, "retry": False})]
