"""pytest plugin: an isolated store per test, a unit-of-work factory, a feed drainer.

Enabled with ``-p cosmos_backend.pytest_plugin`` (or the ``pytest11`` entry point). Fixtures:

* ``doc_store`` – a fresh :class:`EmbeddedStore` in the test's tmp dir (spec from
  ``cosmos_container_spec``, which a project's conftest may override);
* ``uow_factory`` – ``uow_factory()`` returns a new :class:`UnitOfWork` on ``doc_store``;
* ``feed_drainer`` – ``feed_drainer(handler, store=None)`` feeds every change since the last
  call to ``handler(doc)`` synchronously, in feed order per range, and returns the count. It
  runs the real handler in-process: no Celery eager mode, no broker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cosmos_backend.embedded.store import EmbeddedStore
from cosmos_backend.store import ContainerSpec, Document, DocumentStore
from cosmos_backend.uow import UnitOfWork


class FeedDrainer:
    """Reads a store's change feed from where it last stopped and hands each doc over."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store
        self.continuations: dict[str, str | None] = {}

    def __call__(self, handler: Callable[[Document], object], *,
                 only: Callable[[Document], bool] | None = None) -> int:
        count = 0
        for feed_range in self.store.feed_ranges():
            token = self.continuations.get(feed_range)
            while True:
                page = self.store.read_feed(feed_range, continuation=token, max_items=500)
                for doc in page.items:
                    if only is None or only(doc):
                        handler(doc)
                        count += 1
                token = page.continuation
                if not page.items:
                    break
            self.continuations[feed_range] = token
        return count


@pytest.fixture
def cosmos_container_spec() -> ContainerSpec:
    return ContainerSpec(name="test", default_ttl=-1)


@pytest.fixture
def doc_store(tmp_path: Path, cosmos_container_spec: ContainerSpec) -> Iterator[EmbeddedStore]:
    store = EmbeddedStore(str(tmp_path / "store.sqlite3"), cosmos_container_spec)
    yield store
    store.close()


@pytest.fixture
def uow_factory(doc_store: DocumentStore) -> Callable[[], UnitOfWork]:
    return lambda: UnitOfWork(doc_store)


@pytest.fixture
def feed_drainer(doc_store: DocumentStore) -> FeedDrainer:
    return FeedDrainer(doc_store)
