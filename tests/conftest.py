"""Project-wide fixtures: every test gets its own document store and Django database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cosmos_backend.store import ContainerSpec


@pytest.fixture
def his_store_path(tmp_path: Path, settings: object) -> Iterator[Path]:
    """Point the project's store handles at a fresh embedded store for this test."""
    from hisadmin import store as handles

    path = tmp_path / "his-store.sqlite3"
    cfg = dict(settings.DOCUMENT_STORE)  # type: ignore[attr-defined]
    cfg.update(backend="embedded", path=str(path))
    settings.DOCUMENT_STORE = cfg  # type: ignore[attr-defined]
    handles.reset_handles()
    yield path
    handles.reset_handles()


@pytest.fixture
def his_store(his_store_path: Path):  # noqa: ANN201 - DocumentStore
    from hisadmin import store as handles

    return handles.get_store()


@pytest.fixture
def cosmos_container_spec() -> ContainerSpec:
    from hisadmin import store as handles

    return handles.container_spec()
