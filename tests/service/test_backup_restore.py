"""backup under load, restore into a fresh location: every patient as of the snapshot,
the worklists clean; and the refusals (bad input changes nothing)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from cosmos_backend.outbox import is_event
from cosmos_backend.pytest_plugin import FeedDrainer
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import store as handles
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.roles import ensure_groups
from operations import backups
from patients import use_cases
from testkit.fixtures import TEST_PASSWORD
from tests import worklist_data as data
from worklists.delivery.projector import project_event

pytestmark = [pytest.mark.service, pytest.mark.django_db(transaction=True)]

Docs = dict[str, dict[str, str]]  # partition → document id → stored JSON


def _documents(path: Path) -> Docs:
    """Every document of every container of a store file, as stored."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    found: Docs = defaultdict(dict)
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'c\\_%' ESCAPE '\\'"
        )
    ]
    for table in tables:
        for pk, doc_id, doc in conn.execute(f"SELECT pk, id, doc FROM {table}"):
            found[f"{table}/{pk}"][doc_id] = doc
    conn.close()
    return found


def _patients(docs: Docs) -> dict[str, dict[str, str]]:
    return {pk: d for pk, d in docs.items() if pk.split("/", 1)[1].startswith("P_")}


def _seq(partition: dict[str, str]) -> int:
    import json

    return json.loads(partition["stream"])["docContents"]["seq"]


def _project_all(store) -> int:
    drainer = FeedDrainer(store)
    return drainer(
        lambda doc: project_event(store, doc["partitionKey"], int(doc["docContents"]["seq"])),
        only=is_event,
    )


def _one_patient(store, i: int) -> str:
    pid = data.register(store, f"Load{i:03d}", "Ann")
    admission = data.admit(store, pid, "MED", "MED-1")
    data.place_order(store, pid, admission, department="MED")
    use_cases.add_allergy(
        use_cases.AddAllergy(patient_id=pid, substance="Latex", reaction="rash", severity="mild"),
        UnitOfWork(store),
        actor=SYSTEM_ACTOR,
    )
    return pid


@pytest.fixture
def staff(settings) -> list[str]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    ensure_groups()
    for name in ("clerk1", "nurse1", "doc1"):
        User.objects.create_user(name, password=TEST_PASSWORD)
    return sorted(User.objects.values_list("username", flat=True))


def test_a_backup_under_load_restores_every_patient_as_of_one_instant(
    his_store, his_store_path, settings, tmp_path, staff, capsys
) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    settled = [_one_patient(his_store, i) for i in range(5)]
    _project_all(his_store)

    stop, failures, written = threading.Event(), [], []

    def writer(offset: int) -> None:
        i = offset
        while not stop.is_set():
            try:
                written.append(_one_patient(his_store, i))
            except Exception as exc:  # noqa: BLE001 - reported by the test, not swallowed
                failures.append(exc)
                return
            i += 2

    def projector() -> None:  # the relay and workers, as they run beside the backup
        drainer = FeedDrainer(his_store)
        while not stop.is_set():
            drainer(
                lambda doc: project_event(
                    his_store, doc["partitionKey"], int(doc["docContents"]["seq"])
                ),
                only=is_event,
            )
            time.sleep(0.01)

    threads = [threading.Thread(target=writer, args=(100 + n,)) for n in range(2)]
    threads.append(threading.Thread(target=projector))
    for thread in threads:
        thread.start()
    try:
        while len(written) < 4 and not failures:
            time.sleep(0.02)
        call_command("backup", str(tmp_path / "backup"))
        during = len(written)
        while len(written) < during + 4 and not failures:  # the load goes on after the backup
            time.sleep(0.02)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert not failures
    assert "documents, 3 users as of" in capsys.readouterr().out
    source = _documents(his_store_path)

    # A fresh location for the store; Django's database emptied as on a new server.
    restored_path = tmp_path / "elsewhere" / "store.sqlite3"
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "path": str(restored_path)}
    handles.reset_handles()
    User.objects.all().delete()
    call_command("restore", str(tmp_path / "backup"))
    assert sorted(User.objects.values_list("username", flat=True)) == staff
    restored = _documents(restored_path)
    # The views came back with the record, from their own file (not rebuilt).
    assert (tmp_path / "backup" / backups.VIEWS_FILE).is_file()
    restored_views = _documents(Path(handles.views_path(str(restored_path))))
    assert any(pk.split("/", 1)[1].startswith("V_Track_") for pk in restored_views)

    before, after = _patients(source), _patients(restored)
    for pid in settled:  # untouched during the load: identical, document for document
        pk = next(pk for pk in after if pk.endswith(pid))
        assert after[pk] == before[pk]
    assert set(after) <= set(before)
    assert len(after) < len(before)  # patients registered after the snapshot are not in it
    for pk, docs in after.items():
        # As of one instant: each patient is exactly as the source was at its stream
        # sequence. No torn batch; every event there in its order, all the same.
        seq = _seq(docs)
        events = {d for d in docs if d.startswith("evt-")}
        assert len(events) == seq
        assert all(before[pk][d] == docs[d] for d in events)
        if seq == _seq(before[pk]):
            assert docs == before[pk]

    # The restored views then catch up with the restored events, and nothing drifts.
    restored_store = handles.get_store()
    _project_all(restored_store)
    call_command("check_worklists")
    assert "0 drifted; 0 behind" in capsys.readouterr().out


def test_restore_refuses_a_store_with_data_unless_forced(
    his_store, his_store_path, tmp_path, staff
) -> None:
    data.register(his_store, "Kept")
    call_command("backup", str(tmp_path / "b"))
    data.register(his_store, "Later")
    before = _documents(his_store_path)
    with pytest.raises(
        CommandError,
        match=r"nothing restored: the store at .* holds \d+ "
        r"documents; Django's database holds 3 users: "
        r"restore overwrites it only with --force",
    ):
        call_command("restore", str(tmp_path / "b"))
    handles.reset_handles()
    assert _documents(his_store_path) == before
    call_command("restore", str(tmp_path / "b"), "--force")
    after = _patients(_documents(his_store_path))
    assert len(after) == len(_patients(before)) - 1


def test_bad_input_changes_nothing(his_store, his_store_path, tmp_path, staff) -> None:
    data.register(his_store, "Kept")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("mine")
    with pytest.raises(CommandError, match="already exists and is not an empty directory"):
        call_command("backup", str(tmp_path / "full"))
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["x"]

    before = _documents(his_store_path)
    with pytest.raises(CommandError, match="is not a backup"):
        call_command("restore", str(tmp_path / "full"), "--force")
    call_command("backup", str(tmp_path / "b"))
    with (tmp_path / "b" / backups.STORE_FILE).open("r+b") as f:
        f.seek(5000)
        f.write(b"\x00garbage\x00")
    with pytest.raises(CommandError, match="store.sqlite3 is damaged"):
        call_command("restore", str(tmp_path / "b"), "--force")
    handles.reset_handles()
    assert _documents(his_store_path) == before


def test_backup_on_azure_points_to_the_documented_way(settings, tmp_path) -> None:
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "backend": "azure"}
    with pytest.raises(CommandError, match="point-in-time restore"):
        call_command("backup", str(tmp_path / "b"))
    assert not (tmp_path / "b").exists()


def test_restore_refuses_while_a_relay_runs_on_the_store(
    his_store, his_store_path, tmp_path, staff
) -> None:
    data.register(his_store, "Kept")
    call_command("backup", str(tmp_path / "b"))
    leases = handles.get_lease_store()
    ranges = his_store.feed_ranges()
    leases.ensure(ranges)
    lease = leases.try_acquire(ranges[0], "ward-server:4242", ttl=30)
    assert lease is not None
    before = _documents(his_store_path)
    with pytest.raises(
        CommandError,
        match=r"a relay is running on this store "
        r"\(ward-server:4242 holds a lease\)",
    ):
        call_command("restore", str(tmp_path / "b"), "--force")
    assert _documents(his_store_path) == before
    leases.release(lease)
    call_command("restore", str(tmp_path / "b"), "--force")


def test_a_backup_is_readable_by_its_owner_alone(his_store, tmp_path, staff) -> None:
    call_command("backup", str(tmp_path / "b"))
    assert (tmp_path / "b").stat().st_mode & 0o077 == 0
    assert all(p.stat().st_mode & 0o077 == 0 for p in (tmp_path / "b").iterdir())
