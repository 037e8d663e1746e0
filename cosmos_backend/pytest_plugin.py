"""pytest plugin: an isolated store per test, a unit-of-work factory, a feed drainer.

Enabled with ``-p cosmos_backend.pytest_plugin`` (or the ``pytest11`` entry point). Fixtures:

* ``cosmos_container_spec`` – the :class:`ContainerSpec` of ``doc_store`` (a container named
  ``test`` with TTL on); a project's conftest may override it;
* ``doc_store`` – a fresh :class:`EmbeddedStore` in the test's tmp dir;
* ``uow_factory`` – ``uow_factory()`` returns a new :class:`UnitOfWork` on ``doc_store``;
* ``feed_drainer`` – ``feed_drainer(handler, *, only=None)`` hands every change on
  ``doc_store`` since the last call to ``handler(doc)`` synchronously, in feed order per
  range, skipping documents for which ``only(doc)`` is false, and returns how many it
  handed over. It runs the real handler in-process: no Celery eager mode, no broker.
  :class:`FeedDrainer` does the same for any other store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cosmos_backend.embedded import EmbeddedStore
from cosmos_backend.store import ContainerSpec, Document, DocumentStore, iter_feed
from cosmos_backend.uow import UnitOfWork, UowFactory


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
            for page in iter_feed(self.store, feed_range, token, max_items=500):
                for doc in page.items:
                    if only is None or only(doc):
                        handler(doc)
                        count += 1
                token = page.continuation
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
def uow_factory(doc_store: DocumentStore) -> UowFactory:
    return lambda: UnitOfWork(doc_store)


@pytest.fixture
def feed_drainer(doc_store: DocumentStore) -> FeedDrainer:
    return FeedDrainer(doc_store)
