"""Project-wide fixtures: every test gets its own document store and Django database."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cosmos_backend.outbox import is_event
from cosmos_backend.pytest_plugin import FeedDrainer
from cosmos_backend.store import ContainerSpec, DocumentStore
from hisadmin.core import store as handles
from worklists.delivery.projector import project_event

WIRE_DIR = Path(__file__).resolve().parent / "cosmos_wire"
# The emulator's well-known key; the wire server accepts any key.
WIRE_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


@pytest.fixture
def his_store_path(tmp_path: Path, settings: object) -> Iterator[Path]:
    """Point the project's store handles at a fresh embedded store for this test."""
    path = tmp_path / "his-store.sqlite3"
    cfg = dict(settings.DOCUMENT_STORE)  # type: ignore[attr-defined]
    cfg.update(backend="embedded", path=str(path))
    settings.DOCUMENT_STORE = cfg  # type: ignore[attr-defined]
    handles.reset_handles()
    yield path
    handles.reset_handles()


@pytest.fixture
def his_store(his_store_path: Path) -> DocumentStore:
    return handles.get_store()


@pytest.fixture
def cosmos_container_spec() -> ContainerSpec:
    return handles.container_spec()


@pytest.fixture(scope="session")
def wire_endpoint() -> Iterator[str]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Cosmos-protocol test server needs it")
    if not (WIRE_DIR / "node_modules").exists():
        subprocess.run(["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=WIRE_DIR,
                       check=True)
    proc = subprocess.Popen(["node", "server.js", "0", "--feed-ranges", "4"], cwd=WIRE_DIR, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("listening"):
            pytest.fail(f"the Cosmos-protocol server did not start: {line!r}")
        yield f"http://127.0.0.1:{line.split()[1]}/"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def drain_worklists(his_store: DocumentStore) -> Callable[[], int]:
    """``drain_worklists()`` projects every event written since the last call, in-process,
    through the real projection code (no broker, no Celery eager mode); returns the count."""
    drainer = FeedDrainer(his_store)

    def drain() -> int:
        return drainer(lambda doc: project_event(his_store, doc["partitionKey"],
                                                 int(doc["docContents"]["seq"])), only=is_event)

    return drain
