"""The views in a container of their own: routing, files, and the upgrade of a store made
with one container (everything in one file) by `cosmos_init`, which `make run` runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.leases import LeaseStore
from cosmos_backend.outbox import is_event
from cosmos_backend.pytest_plugin import FeedDrainer
from cosmos_backend.store import ContainerSpec
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import store as handles
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests import worklist_data as data
from worklists.delivery.projector import project_event
from worklists.persistence import generations
from worklists.read import queries

pytestmark = [pytest.mark.service]


def _rows(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(partition, id) → (document, etag) of every container in a store file."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'c\\_%' ESCAPE '\\'")]
    found = {(pk, doc_id): (doc, etag) for table in tables
             for pk, doc_id, doc, etag in conn.execute(f"SELECT pk, id, doc, etag FROM {table}")}
    conn.close()
    return found


def _project(store, drainer: FeedDrainer) -> int:
    return drainer(lambda doc: project_event(store, doc["partitionKey"],
                                             int(doc["docContents"]["seq"])), only=is_event)


def test_views_and_leases_live_in_their_own_file(his_store, his_store_path) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    pid = data.register(his_store, "Ørsted-Łukasiewicz", "Zoë")
    data.admit(his_store, pid, "CARD", "CARD-A")
    assert _project(his_store, FeedDrainer(his_store)) > 2
    handles.get_lease_store().ensure(his_store.feed_ranges())

    clinical = {pk for pk, _ in _rows(his_store_path)}
    views = {pk for pk, _ in _rows(Path(handles.views_path(str(his_store_path))))}
    assert f"P_{pid}" in clinical and not any(pk.startswith("V_") for pk in clinical)
    assert any(pk.startswith("V_Track_g") for pk in views)
    assert any(pk.startswith("V_Admitted_g") for pk in views) and "leases" in views
    assert not any(pk.startswith(("P_", "R_", "M_")) for pk in views)
    rows = queries.run(his_store, queries.admitted("CARD")).rows
    assert [r["patientId"] for r in rows] == [pid]


def test_a_one_container_store_is_upgraded_with_nothing_lost(
    his_store_path, settings, capsys
) -> None:
    # A store as the release before this one made it: one file, one container holding the
    # record and the views (with the views' indexes), the relay's leases beside them.
    old_spec = ContainerSpec(name=settings.DOCUMENT_STORE["container"], default_ttl=-1,
                             indexing_policy={**handles.indexing_policy("clinical"),
                                              "compositeIndexes": [
                                                  *handles.indexing_policy("clinical")[
                                                      "compositeIndexes"],
                                                  *handles.indexing_policy("views")[
                                                      "compositeIndexes"]]})
    old = EmbeddedStore(str(his_store_path), old_spec)
    list(use_cases.load_reference_data(UnitOfWork(old), actor=SYSTEM_ACTOR))
    pids = [data.register(old, f"Müller-{i}", "Renée") for i in range(3)]
    admissions = [data.admit(old, pid, "CARD", "CARD-A") for pid in pids]
    data.place_order(old, pids[0], admissions[0], department="CARD")
    drainer = FeedDrainer(old)
    _project(old, drainer)
    leases = LeaseStore(EmbeddedStore(str(his_store_path), handles.lease_spec()))
    ranges = old.feed_ranges()
    leases.ensure(ranges)
    lease = leases.try_acquire(ranges[0], "old-relay:1", ttl=1)
    assert lease is not None
    leases.checkpoint(lease, "17", 17, ttl=1)
    old.close()
    before = _rows(his_store_path)
    assert any(pk.startswith("V_Track_") for pk, _ in before)

    call_command("cosmos_init")
    out = capsys.readouterr().out
    assert "view documents moved" in out and "leases and checkpoints moved" in out

    after_clinical = _rows(his_store_path)
    views_file = Path(handles.views_path(str(his_store_path)))
    after_views = _rows(views_file)
    # Not one clinical document changed (content or etag); every view document moved as it
    # was (etags kept: the trackers' remembered etags still match); nothing left behind.
    kept = {key: value for key, value in before.items() if not key[0].startswith("V_")
            and key[0] != "leases"}
    assert after_clinical == kept
    moved = {key: value for key, value in before.items() if key not in kept}
    # … and the generation pointer written, naming the layout the views were made in (this
    # release's: nothing of a ward's lists in partitions of their own)
    pointer = after_views.pop(("V_Meta", "generation"))
    assert json.loads(pointer[0])["docContents"]["layouts"] == {"1": generations.LAYOUT}
    assert after_views == moved

    # Again: nothing to move, nothing changes.
    call_command("cosmos_init")
    assert "moved" not in capsys.readouterr().out
    assert _rows(his_store_path) == kept

    # The upgraded store works: the worklists read the moved rows, the relay's checkpoint
    # is where it was, a new event projects on top of the moved tracker, nothing drifts.
    handles.reset_handles()
    store = handles.get_store()
    assert {r["patientId"] for r in queries.run(store, queries.admitted("CARD")).rows} == set(pids)
    moved_lease = handles.get_lease_store().get(ranges[0])
    assert (moved_lease.continuation, moved_lease.position) == ("17", 17)
    data.discharge(store, pids[1])
    assert _project(store, drainer) == 1
    assert {r["patientId"] for r in queries.run(store, queries.admitted("CARD")).rows} == \
        {pids[0], pids[2]}
    call_command("check_worklists")
    assert "3 patients checked; 0 drifted; 0 behind" in capsys.readouterr().out
