"""`manage.py cosmos_init` is idempotent on both backends."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from hisadmin import store as handles
from tests.conftest import WIRE_KEY

pytestmark = pytest.mark.contract


def run_init() -> str:
    out = io.StringIO()
    call_command("cosmos_init", stdout=out)
    return out.getvalue()


def test_it_provisions_the_embedded_store_idempotently(settings, tmp_path: Path) -> None:  # noqa: ANN001
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "backend": "embedded",
                               "path": str(tmp_path / "s.sqlite3")}
    handles.reset_handles()
    first, second = run_init(), run_init()
    assert "container 'clinical' created" in first
    assert "index" in first
    assert "container 'clinical' exists" in second
    assert "created" not in second


def test_it_provisions_cosmos_over_the_wire_idempotently(settings, wire_endpoint: str) -> None:  # noqa: ANN001
    settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "backend": "azure",
                               "endpoint": wire_endpoint, "key": WIRE_KEY,
                               "database": "init-" + uuid.uuid4().hex[:6],
                               "connection_verify": False}
    first, second = run_init(), run_init()
    assert "database" in first and "created" in first
    assert "container 'clinical' created" in first
    assert "container 'clinical' exists, unchanged" in second
    assert "container 'leases' exists, unchanged" in second
