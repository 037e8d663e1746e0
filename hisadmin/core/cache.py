"""The one per-process cache: entries that expire after a few seconds.

Reference data, live generations, relay lag and bearer-token lookups are read far more often
than they change; each process keeps them for a short time instead of asking the store or
the database on every request. Built on ``cachetools.TTLCache`` (a well-kept, small
library) with a lock, since web processes serve requests from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, MutableMapping
from typing import Generic, TypeVar

from cachetools import LRUCache, TTLCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LockedCache(Generic[K, V]):
    """A ``cachetools`` cache shared by a process's threads: ``peek``, ``put``, ``forget``
    under one lock."""

    def __init__(self, entries: MutableMapping[K, V]) -> None:
        self._entries = entries
        self._lock = threading.Lock()

    def peek(self, key: K) -> V | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value

    def forget(self, key: K | None = None) -> None:
        """Drop one entry, or every entry when ``key`` is None."""
        with self._lock:
            if key is None:
                self._entries.clear()
            else:
                self._entries.pop(key, None)


class ExpiringCache(LockedCache[Hashable, V]):
    """``get(key, load)`` answers from the cache, or calls ``load()`` and keeps the result
    for ``seconds``. Loads run outside the lock: two threads may load one key at once, and
    the later result wins (every load here is an idempotent read)."""

    def __init__(self, seconds: float, maxsize: int = 10_000) -> None:
        super().__init__(TTLCache(maxsize=maxsize, ttl=seconds))
        self.seconds = seconds

    def get(self, key: Hashable, load: Callable[[], V]) -> V:
        with self._lock:
            try:
                return self._entries[key]
            except KeyError:
                pass
        value = load()
        with self._lock:
            self._entries[key] = value
        return value


class LruCache(LockedCache[K, V]):
    """The ``maxsize`` entries used last (``cachetools.LRUCache``). For values a process
    keeps because it wrote them itself."""

    def __init__(self, maxsize: int) -> None:
        super().__init__(LRUCache(maxsize=maxsize))
