"""The store contract runs against every backend: ids embedded, cosmos-wire, cosmos-live.

cosmos-wire starts tests/cosmos_wire/server.js (a Cosmos-protocol server) and talks to it
through the real azure-cosmos SDK. cosmos-live runs when COSMOS_ENDPOINT and COSMOS_KEY are set.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from cosmos_backend.store import ContainerSpec, DocumentStore
from tests.conftest import WIRE_KEY

POLICY = {
    "includedPaths": [{"path": "/docType/?"}, {"path": "/n/?"}, {"path": "/name/?"},
                      {"path": "/grp/?"}],
    "excludedPaths": [{"path": "/*"}],
    "compositeIndexes": [
        [{"path": "/grp", "order": "ascending"}, {"path": "/n", "order": "ascending"},
         {"path": "/id", "order": "ascending"}],
        [{"path": "/n", "order": "ascending"}, {"path": "/id", "order": "ascending"}],
        [{"path": "/n", "order": "descending"}, {"path": "/id", "order": "ascending"}],
        [{"path": "/name", "order": "ascending"}, {"path": "/id", "order": "ascending"}],
        [{"path": "/grp", "order": "ascending"}, {"path": "/n", "order": "descending"},
         {"path": "/id", "order": "ascending"}],
    ],
}

StoreFactory = Callable[[], DocumentStore]


def spec(name: str = "contract") -> ContainerSpec:
    return ContainerSpec(name=name, default_ttl=-1, indexing_policy=POLICY)


def _embedded(tmp_path: Path) -> StoreFactory:
    from cosmos_backend.embedded import EmbeddedStore

    path = str(tmp_path / "contract.sqlite3")
    return lambda: EmbeddedStore(path, spec())


def _azure(endpoint: str, key: str, verify: bool) -> StoreFactory:
    from cosmos_backend.azure import connect, provision

    database = "contract-" + uuid.uuid4().hex[:8]
    the_spec = spec("c" + uuid.uuid4().hex[:8])
    provision(endpoint, key, database, the_spec, connection_verify=verify)
    return lambda: connect(endpoint, key, database, the_spec, connection_verify=verify)


@pytest.fixture(params=["embedded", "cosmos-wire", "cosmos-live"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Makes store handles on ONE fresh container; a second handle simulates a restart."""
    if request.param == "embedded":
        return _embedded(tmp_path)
    if request.param == "cosmos-wire":
        return _azure(request.getfixturevalue("wire_endpoint"), WIRE_KEY, verify=False)
    endpoint, key = os.environ.get("COSMOS_ENDPOINT"), os.environ.get("COSMOS_KEY")
    if not endpoint or not key:
        pytest.skip("cosmos-live needs COSMOS_ENDPOINT and COSMOS_KEY (Azure or the emulator)")
    return _azure(endpoint, key, verify=os.environ.get("COSMOS_VERIFY_TLS", "true") == "true")


@pytest.fixture
def store(store_factory: StoreFactory) -> DocumentStore:
    return store_factory()


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return request.node.callspec.params["store_factory"]
