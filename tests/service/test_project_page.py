"""A change-feed page applied at once: the views' write lock taken once for many patients,
a failing patient undone alone and sent on, a page applied twice changing nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bench.counting import CountingStore, Meter
from cosmos_backend.store import DocumentStore, Query, iter_feed
from hisadmin.core import held_streams, recent_events
from tests import worklist_data as data
from tests.worklist_data import relay_page
from worklists.delivery import tasks
from worklists.ops.maintenance import check_patient
from worklists.persistence import view_rows
from worklists.persistence.generations import live_generations
from worklists.persistence.trackers import bucket_of
from worklists.read import queries

pytestmark = [pytest.mark.service]


def _admitted(store: DocumentStore) -> set[str]:
    return {r["patientId"] for r in queries.run(store, queries.admitted("CARD")).rows}


def _three_admitted(store: DocumentStore, family: str, after: dict[str, str | None]
                    ) -> list[str]:
    """Three patients registered and admitted to CARD-A (their page not read yet)."""
    relay_page(store, after)  # what came before: not this test's
    pids = [data.register(store, f"{family}-{i}") for i in range(3)]
    for pid in pids:
        data.admit(store, pid, "CARD", "CARD-A")
    return pids


def _second_sent_on_alone(store: DocumentStore, streams: list[list], pids: list[str],
                          outcome: str, restore: Callable[[], None]) -> None:
    """The page applied: only the second patient sent on alone, the others' rows written;
    then (``restore`` undoing the fault) its own message projects it."""
    sent_on: list[tuple[str, list[int]]] = []
    assert tasks.apply_page(store, streams, alone=lambda s, q: sent_on.append((s, q))
                            ) == outcome
    assert sent_on == [(f"P_{pids[1]}", [1, 2])]
    assert _admitted(store) == {pids[0], pids[2]}  # its rows undone with its tracker
    restore()
    tasks.project(store, *sent_on[0])  # as its own message does
    assert _admitted(store) == set(pids)


def test_a_page_of_many_patients_is_one_write_of_the_views(his_store, his_reference_data
                                                           ) -> None:
    after: dict[str, str | None] = {}
    relay_page(his_store, after)  # the reference data's events: not this test's
    pids = [data.register(his_store, f"Ñúñez-{i}", "Zoë") for i in range(6)]
    for pid in pids:
        data.admit(his_store, pid, "CARD", "CARD-A")
    streams = relay_page(his_store, after)
    assert sorted(s for s, _ in streams) == sorted(f"P_{p}" for p in pids)
    assert all(seqs == [1, 2] for _, seqs in streams)  # each stream's events, in order
    views = his_store.views
    before = views.write_transactions
    assert tasks.apply_page(his_store, streams) == "6 streams, 12 events, 0 sent on alone"
    assert views.write_transactions == before + 1  # rows and trackers of six patients
    assert _admitted(his_store) == set(pids)
    # Delivered again (at least once): nothing changes, nothing is written.
    assert tasks.apply_page(his_store, streams) == "6 streams, 12 events, 0 sent on alone"
    assert views.write_transactions == before + 2
    assert _admitted(his_store) == set(pids)


def test_a_patient_failing_in_its_page_is_undone_alone_and_sent_on(
        his_store, his_reference_data, monkeypatch: pytest.MonkeyPatch) -> None:
    after: dict[str, str | None] = {}
    pids = _three_admitted(his_store, "Øster", after)
    streams = relay_page(his_store, after)
    real = tasks.project

    def flaky(store, stream_pk, seqs):
        outcome = real(store, stream_pk, seqs)  # its rows and tracker written, then:
        if stream_pk == f"P_{pids[1]}":
            raise TimeoutError("the worker was interrupted")
        return outcome

    monkeypatch.setattr(tasks, "project", flaky)
    _second_sent_on_alone(his_store, streams, pids, "3 streams, 4 events, 1 sent on alone",
                          lambda: monkeypatch.setattr(tasks, "project", real))


class _Partitions(CountingStore):
    """The metering store, also noting the partition of every call."""

    def __init__(self, inner: DocumentStore) -> None:
        super().__init__(inner, Meter())
        self.calls: list[str] = []

    def read(self, pk: str, doc_id: str):
        self.calls.append(f"read {pk}")
        return super().read(pk, doc_id)

    def query(self, pk: str, query, **kwargs):
        self.calls.append(f"query {pk}")
        return super().query(pk, query, **kwargs)

    def create(self, doc):
        self.calls.append(doc["partitionKey"])
        return super().create(doc)

    def replace(self, doc, *, if_match=None):
        self.calls.append(doc["partitionKey"])
        return super().replace(doc, if_match=if_match)

    def delete(self, pk: str, doc_id: str, *, if_match=None):
        self.calls.append(pk)
        return super().delete(pk, doc_id, if_match=if_match)

    def execute_batch(self, pk: str, ops):
        self.calls.append(pk)
        return super().execute_batch(pk, ops)


def _kept_page(store: DocumentStore, after: dict[str, str | None]) -> list[list]:
    """As :func:`_page`, with the events kept as the relay inside the worker keeps them."""
    for rng in store.feed_ranges():
        for page in iter_feed(store, rng, after.get(rng)):
            recent_events.keep(page.items)
    return relay_page(store, after)


def _warm(store: DocumentStore) -> None:
    """The caches a running worker has warm: held streams (1 s), live generations."""
    held_streams.held_now(store)
    live_generations(store)


def test_a_page_writes_each_view_partition_and_tracker_bucket_once(
        his_store, his_reference_data) -> None:
    """Round trips counted against the embedded store: the rows of every patient of the page
    go a batch per view partition, the trackers a batch per bucket, and nothing is read."""
    after: dict[str, str | None] = {}
    relay_page(his_store, after)
    counting = _Partitions(his_store)
    first = [data.register(his_store, f"Ñúñez-{i}", "Zoë") for i in range(6)]
    tasks.apply_page(counting, _kept_page(his_store, after))  # as a worker did
    for pid in first:
        data.admit(his_store, pid, "CARD", "CARD-A")
    streams = _kept_page(his_store, after)
    _warm(counting)
    counting.calls.clear()
    counting.meter.reset()
    assert tasks.apply_page(counting, streams) == "6 streams, 6 events, 0 sent on alone"
    assert not [c for c in counting.calls if c.startswith(("read", "query"))]
    assert len(counting.calls) == len(set(counting.calls))  # each partition once
    trackers = {f"V_Track_g1_{bucket_of(pid)}" for pid in first}
    rows = {c for c in counting.calls if not c.startswith("V_Track")}
    # names (one initial: a batch of six), admitted (the department's), the ward's lists
    # (my patients, observations due, the open census … share its partition): one batch
    # each, whatever the patients
    assert rows == {"V_Names_g1_NU", "V_Admitted_g1_CARD", "V_Ward_g1_CARD-A"}
    assert set(counting.calls) == rows | trackers
    assert counting.meter.snapshot()["round_trips"] == len(counting.calls)
    assert counting.meter.snapshot()["round_trips"] / 6 <= 2.5
    assert _admitted(his_store) == set(first)
    gen = live_generations(his_store)[0]
    assert all(check_patient(his_store, gen, pid) == [] for pid in first)


def test_a_patient_whose_row_changed_underneath_is_redone_and_the_rest_of_the_batch_kept(
        his_store, his_reference_data) -> None:
    after: dict[str, str | None] = {}
    pids = _three_admitted(his_store, "Åberg", after)
    counting = _Partitions(his_store)
    tasks.apply_page(counting, _kept_page(his_store, after))
    gen = live_generations(his_store)[0]
    # Someone else rewrote the second patient's admitted row: the etag its tracker keeps is
    # stale, so its delete fails the department's batch.
    [row] = [r for r in his_store.query_all(f"V_Admitted_g{gen}_CARD", Query())
             if r["docContents"]["patientId"] == pids[1]]
    his_store.replace(row)
    for pid in pids:
        data.discharge(his_store, pid)
    streams = _kept_page(his_store, after)
    _warm(counting)
    counting.calls.clear()
    assert tasks.apply_page(counting, streams) == "3 streams, 3 events, 0 sent on alone"
    admitted = f"V_Admitted_g{gen}_CARD"
    assert counting.calls.count(admitted) == 3  # the batch, again without it, its redo
    assert f"read {admitted}" in counting.calls  # the redo reads the row first
    assert _admitted(his_store) == set()
    assert all(check_patient(his_store, gen, pid) == [] for pid in pids)
    # Applied again: nothing changes.
    assert tasks.apply_page(his_store, streams) == "3 streams, 3 events, 0 sent on alone"
    assert all(check_patient(his_store, gen, pid) == [] for pid in pids)


def test_a_patient_whose_row_the_store_refuses_is_sent_on_alone_and_the_rest_written(
        his_store, his_reference_data, monkeypatch: pytest.MonkeyPatch) -> None:
    after: dict[str, str | None] = {}
    pids = _three_admitted(his_store, "Ødegård", after)
    streams = _kept_page(his_store, after)
    real = view_rows._document

    def refused(store, row, gen, seq):  # the store refuses this one row, every time
        doc = real(store, row, gen, seq)
        if row.view == "Admitted" and doc["docContents"].get("patientId") == pids[1]:
            doc["id"] = "not/valid"
        return doc

    monkeypatch.setattr(view_rows, "_document", refused)
    _second_sent_on_alone(his_store, streams, pids, "3 streams, 6 events, 1 sent on alone",
                          lambda: monkeypatch.setattr(view_rows, "_document", real))
    gen = live_generations(his_store)[0]
    assert all(check_patient(his_store, gen, pid) == [] for pid in pids)
