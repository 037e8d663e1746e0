"""The store contract runs against every backend: ids embedded, cosmos-wire, cosmos-live.

embedded is the SQLite engine on a temporary file. cosmos-wire talks to tests/cosmos_wire/
server.js (a Cosmos-protocol server with four partition-key ranges) through the real azure-cosmos
SDK. cosmos-live runs when COSMOS_ENDPOINT and COSMOS_KEY are set (Azure or the emulator).
Every test gets a fresh container; Cosmos containers are deleted afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cosmos_backend.azure import connect, provision
from cosmos_backend.azure.client import build_client
from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.store import ContainerSpec, DocumentStore
from tests.conftest import WIRE_KEY

POLICY = {
    "includedPaths": [{"path": p} for p in ("/id/?", "/docType/?", "/n/?", "/name/?", "/grp/?",
                                            "/docContents/ward/?", "/docContents/bed/?")],
    "excludedPaths": [{"path": "/*"}],
    "compositeIndexes": [
        [{"path": "/grp", "order": "ascending"}, {"path": "/n", "order": "ascending"},
         {"path": "/id", "order": "ascending"}],
        [{"path": "/n", "order": "ascending"}, {"path": "/id", "order": "ascending"}],
        # (n DESC, id DESC) — the id tie-break follows the last key — reads (n, id) backwards.
        [{"path": "/name", "order": "ascending"}, {"path": "/id", "order": "ascending"}],
        [{"path": "/grp", "order": "ascending"}, {"path": "/n", "order": "descending"},
         {"path": "/id", "order": "descending"}],
        [{"path": "/docContents/ward", "order": "ascending"},
         {"path": "/docContents/bed", "order": "descending"}, {"path": "/id", "order": "descending"}],
    ],
}
BACKENDS = ["embedded", "cosmos-wire", "cosmos-live"]
StoreFactory = Callable[[], DocumentStore]


def spec(name: str = "contract", default_ttl: int | None = -1) -> ContainerSpec:
    return ContainerSpec(name=name, default_ttl=default_ttl, indexing_policy=POLICY)


class Backend:
    """Opens stores on fresh containers of one backend and cleans up after the test."""

    def __init__(self, name: str, tmp_path: Path, endpoint: str = "", key: str = "",
                 verify: bool = True) -> None:
        self.name, self.tmp_path = name, tmp_path
        self.endpoint, self.key, self.verify = endpoint, key, verify
        self.database = "contract-" + uuid.uuid4().hex[:8]
        self.opened: list[DocumentStore] = []
        self.containers: list[str] = []

    def container(self, the_spec: ContainerSpec | None = None) -> StoreFactory:
        """A fresh container; the factory opens handles on it (a new handle = a restart)."""
        the_spec = the_spec or spec()
        if self.name == "embedded":
            path = str(self.tmp_path / f"{uuid.uuid4().hex[:8]}.sqlite3")
            return self._tracking(lambda: EmbeddedStore(path, the_spec))
        the_spec = ContainerSpec(name="c" + uuid.uuid4().hex[:8], default_ttl=the_spec.default_ttl,
                                 indexing_policy=the_spec.indexing_policy)
        provision(self.endpoint, self.key, self.database, the_spec, connection_verify=self.verify)
        self.containers.append(the_spec.name)
        return self._tracking(lambda: connect(self.endpoint, self.key, self.database, the_spec,
                                              connection_verify=self.verify))

    def _tracking(self, open_store: StoreFactory) -> StoreFactory:
        def opened() -> DocumentStore:
            store = open_store()
            self.opened.append(store)
            return store

        return opened

    def cleanup(self) -> None:
        for store in self.opened:
            store.close()
        if self.containers:
            with build_client(self.endpoint, self.key, connection_verify=self.verify) as client:
                client.delete_database(self.database)


@pytest.fixture(params=BACKENDS)
def backend_kit(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "embedded":
        kit = Backend("embedded", tmp_path)
    elif request.param == "cosmos-wire":
        kit = Backend("cosmos-wire", tmp_path, request.getfixturevalue("wire_endpoint"),
                      WIRE_KEY, verify=False)
    else:
        endpoint, key = os.environ.get("COSMOS_ENDPOINT"), os.environ.get("COSMOS_KEY")
        if not endpoint or not key:
            pytest.skip("cosmos-live needs COSMOS_ENDPOINT and COSMOS_KEY (Azure or the emulator)")
        kit = Backend("cosmos-live", tmp_path, endpoint, key,
                      verify=os.environ.get("COSMOS_VERIFY_TLS", "true") == "true")
    yield kit
    kit.cleanup()


@pytest.fixture
def store_factory(backend_kit: Backend) -> StoreFactory:
    """Opens store handles on ONE fresh container; a second handle simulates a restart."""
    return backend_kit.container()


@pytest.fixture
def store(store_factory: StoreFactory) -> DocumentStore:
    return store_factory()


@pytest.fixture
def backend(backend_kit: Backend) -> str:
    return backend_kit.name


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every contract test is quick on every backend; a hang is a bug, not a slow test.
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(60))
