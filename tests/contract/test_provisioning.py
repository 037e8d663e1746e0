"""Provisioning (`manage.py cosmos_init`) is idempotent and aligns an existing container."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from pytest_django.fixtures import Settings

from cosmos_backend import errors
from cosmos_backend.azure import connect, provision
from cosmos_backend.store import ContainerSpec
from hisadmin.core import store as handles
from tests.conftest import WIRE_KEY
from tests.contract.conftest import POLICY

pytestmark = pytest.mark.contract


def run_init() -> str:
    out = io.StringIO()
    call_command("cosmos_init", stdout=out)
    return out.getvalue()


def test_it_provisions_the_embedded_store_idempotently(settings: Settings, tmp_path: Path) -> None:
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "backend": "embedded",
                               "path": str(tmp_path / "s.sqlite3")}
    handles.reset_handles()
    first, second = run_init(), run_init()
    assert "container 'clinical' created" in first
    assert "s-views.sqlite3: container 'views' created" in first
    assert "s-views.sqlite3: container 'leases' created" in first
    assert "index" in first
    assert "container 'clinical' exists" in second
    assert "container 'views' exists" in second
    assert "created" not in second


def test_it_provisions_cosmos_over_the_wire_idempotently(settings: Settings,
                                                         wire_endpoint: str) -> None:
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "backend": "azure",
                               "endpoint": wire_endpoint, "key": WIRE_KEY,
                               "database": "init-" + uuid.uuid4().hex[:6],
                               "connection_verify": False}
    first, second = run_init(), run_init()
    assert "database" in first and "created" in first
    assert "container 'clinical' created" in first
    assert "exists" in second and "created" not in second
    assert "container 'views' created" in first
    assert "container 'clinical' exists, unchanged" in second
    assert "container 'views' exists, unchanged" in second
    assert "container 'leases' exists, unchanged" in second


def test_it_updates_ttl_and_policy_in_place_and_keeps_the_documents(wire_endpoint: str) -> None:
    database = "prov-" + uuid.uuid4().hex[:6]
    spec = ContainerSpec(name="c", default_ttl=-1, indexing_policy=POLICY)
    provision(wire_endpoint, WIRE_KEY, database, spec)
    store = connect(wire_endpoint, WIRE_KEY, database, spec)
    store.create({"id": "a", "partitionKey": "P_1"})
    narrower = {**POLICY, "compositeIndexes": POLICY["compositeIndexes"][:2]}
    lines = provision(wire_endpoint, WIRE_KEY, database,
                      ContainerSpec(name="c", default_ttl=3600, indexing_policy=narrower))
    assert lines[0] == f"database {database!r} exists"
    assert "indexing policy updated" in lines[1] and "default TTL -1 -> 3600" in lines[1]
    assert store.read("P_1", "a")["id"] == "a"
    again = provision(wire_endpoint, WIRE_KEY, database,
                      ContainerSpec(name="c", default_ttl=3600, indexing_policy=narrower))
    assert again[1] == "container 'c' exists, unchanged"
    store.close()


def test_it_refuses_to_change_the_partition_key(wire_endpoint: str) -> None:
    database = "prov-" + uuid.uuid4().hex[:6]
    provision(wire_endpoint, WIRE_KEY, database, ContainerSpec(name="c"))
    with pytest.raises(errors.InvalidRequest, match="partitioned by"):
        provision(wire_endpoint, WIRE_KEY, database,
                  ContainerSpec(name="c", partition_key_path="/tenant"))


def test_it_reports_an_unreachable_endpoint_as_unavailable() -> None:
    with pytest.raises(errors.Unavailable):
        connect("http://127.0.0.1:9/", WIRE_KEY, "db", ContainerSpec(name="c"))
