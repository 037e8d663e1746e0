"""Where a generation's rows live is fixed when the generation is made (its layout). A store
whose views were made before layouts (each ward's list in a partition of its own) is named
so by `cosmos_init`, keeps working as it is, and moves into one partition per ward with the
next `rebuild_worklists`, online."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command

from hisadmin.core import store as handles
from tests import worklist_data as data
from worklists.persistence import generations
from worklists.read import queries

pytestmark = [pytest.mark.service]


def _view_partitions(store_path: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{handles.views_path(str(store_path))}?mode=ro", uri=True)
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'c\\_%' ESCAPE '\\'")]
    found = {pk for table in tables for (pk,) in conn.execute(f"SELECT DISTINCT pk FROM {table}")}
    conn.close()
    return found


def _on_ward(store) -> set[str]:
    return {r["patientId"] for r in queries.observations_due(store, "CARD-A").rows}


def test_a_fresh_store_gets_this_releases_layout_once(his_store, capsys) -> None:
    call_command("cosmos_init")
    assert "uses layout 2 (one partition per ward)" in capsys.readouterr().out
    assert generations.pointer(his_store)["layouts"] == {"1": generations.LAYOUT}
    call_command("cosmos_init")
    assert "layout" not in capsys.readouterr().out  # named once: nothing to do again


def test_views_made_before_layouts_are_read_where_they_are_then_moved_by_a_rebuild(
        his_store, his_store_path, his_reference_data, drain_worklists, capsys) -> None:
    # Views as a release before layouts made them: every list of the ward in a partition of
    # its own, and no generation pointer.
    generations.mark_layout(his_store, generations.BEFORE_LAYOUTS)
    pids = [data.register(his_store, f"Ødegård-{i}", "Zoë") for i in range(3)]
    for pid in pids:
        data.admit(his_store, pid, "CARD", "CARD-A")
    drain_worklists()
    before = _view_partitions(his_store_path)
    assert {"V_ObsDue_g1_CARD-A", "V_Census_g1_CARD-A_open"} <= before
    assert not any(pk.startswith("V_Ward_") for pk in before)
    his_store.delete(generations.META_PK, generations.GENERATION_ID)
    generations.forget()

    call_command("cosmos_init")
    assert "keeps the layout it was made with" in capsys.readouterr().out
    assert generations.layout(his_store, 1) == generations.BEFORE_LAYOUTS
    # The old partitions are read and written as they are: a discharge leaves the list.
    assert _on_ward(his_store) == set(pids)
    data.discharge(his_store, pids[1])
    drain_worklists()
    assert _on_ward(his_store) == {pids[0], pids[2]}
    assert not any(pk.startswith("V_Ward_") for pk in _view_partitions(his_store_path))

    call_command("rebuild_worklists")
    assert generations.pointer(his_store)["active"] == 2
    assert generations.layout(his_store, 2) == generations.LAYOUT
    after = _view_partitions(his_store_path)
    assert "V_Ward_g2_CARD-A" in after
    # The retired generation is dropped whole, its old partitions too; the new one has none.
    assert not any(pk.startswith(("V_ObsDue_", "V_MyPatients_", "V_Census_g1",
                                  "V_Census_g2_CARD-A_open")) for pk in after)
    assert _on_ward(his_store) == {pids[0], pids[2]}
    data.discharge(his_store, pids[0])
    drain_worklists()
    assert _on_ward(his_store) == {pids[2]}
    capsys.readouterr()
    call_command("check_worklists")
    assert "3 patients checked; 0 drifted; 0 behind" in capsys.readouterr().out
