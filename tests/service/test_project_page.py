"""A change-feed page applied at once: the views' write lock taken once for many patients,
a failing patient undone alone and sent on, a page applied twice changing nothing."""

from __future__ import annotations

import pytest

from cosmos_backend.store import DocumentStore
from tests import worklist_data as data
from tests.worklist_data import relay_page
from worklists.delivery import tasks
from worklists.read import queries

pytestmark = [pytest.mark.service]


def _admitted(store: DocumentStore) -> set[str]:
    return {r["patientId"] for r in queries.run(store, queries.admitted("CARD")).rows}


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
    relay_page(his_store, after)
    pids = [data.register(his_store, f"Øster-{i}") for i in range(3)]
    for pid in pids:
        data.admit(his_store, pid, "CARD", "CARD-A")
    streams = relay_page(his_store, after)
    real = tasks.project

    def flaky(store, stream_pk, seqs):
        outcome = real(store, stream_pk, seqs)  # its rows and tracker written, then:
        if stream_pk == f"P_{pids[1]}":
            raise TimeoutError("the worker was interrupted")
        return outcome

    monkeypatch.setattr(tasks, "project", flaky)
    sent_on: list[tuple[str, list[int]]] = []
    outcome = tasks.apply_page(his_store, streams, alone=lambda s, q: sent_on.append((s, q)))
    assert outcome == "3 streams, 4 events, 1 sent on alone"
    assert sent_on == [(f"P_{pids[1]}", [1, 2])]
    assert _admitted(his_store) == {pids[0], pids[2]}  # its rows undone with its tracker
    monkeypatch.setattr(tasks, "project", real)
    tasks.project(his_store, *sent_on[0])  # as its own message does
    assert _admitted(his_store) == set(pids)
