"""The data directory is the owner's alone: 0700, its files 0600, whatever the umask
(hisadmin.core.files, the launcher's restatement, the embedded store)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.store import ContainerSpec
from hisadmin.core import files

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def loose_tree(root: Path) -> None:
    (root / "redis").mkdir(parents=True)
    root.chmod(0o755)
    (root / "redis").chmod(0o755)
    for name in ("django.sqlite3", "store.sqlite3", "redis/redis.rdb", "redis/redis.log"):
        (root / name).write_text("x")
        (root / name).chmod(0o644)


def test_it_takes_group_and_other_bits_off_everything(tmp_path: Path) -> None:
    var = tmp_path / "var"
    loose_tree(var)
    assert len(files.open_to_others(var)) == 6
    assert files.tighten(var) == 6
    assert files.open_to_others(var) == []
    assert mode(var) == mode(var / "redis") == 0o700
    assert mode(var / "redis" / "redis.rdb") == mode(var / "store.sqlite3") == 0o600


def test_the_launcher_makes_var_private_for_itself_and_its_children(tmp_path: Path) -> None:
    """In a child: the umask is the process's, and this test's must stay as it is."""
    var = tmp_path / "var"
    loose_tree(var)
    probe = ("import os, sys, subprocess; from pathlib import Path\n"
             "from hisadmin import launcher\n"
             "os.umask(0o022); var = Path(sys.argv[1])\n"
             "launcher.private_data_dir(var)\n"
             "open(var / 'new.log', 'w').close()\n"
             "subprocess.run(['sh', '-c', 'mkdir \"$0/child\" && touch \"$0/child/f\"', str(var)],"
             " check=True)\n")
    subprocess.run([sys.executable, "-c", probe, str(var)], cwd=ROOT, check=True)
    assert files.open_to_others(var) == []
    assert mode(var / "new.log") == mode(var / "child" / "f") == 0o600
    assert mode(var / "child") == 0o700


def test_the_embedded_store_is_the_owners_alone_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        store = EmbeddedStore(str(tmp_path / "data" / "store.sqlite3"), ContainerSpec("c"))
        store.create({"id": "a", "partitionKey": "p"})
    finally:
        os.umask(previous)
    made = [p for p in (tmp_path / "data").iterdir()]
    assert made and all(mode(p) == 0o600 for p in made), [(p.name, oct(mode(p))) for p in made]
    assert mode(tmp_path / "data") == 0o700
    store.close()
