"""Waiting for the projections to apply a consistency token (read-your-writes).

A token names, per event stream, the last event a command committed
(:mod:`hisadmin.core.consistency`). A patient stream is applied when the patient's tracker
in the active generation has reached that sequence number: one point read per stream per
look. Streams no worklist projects (reference data) count as applied.

A wait is bounded twice: one request waits at most its ``timeout`` (the callers pass
``consistency.WAIT_SECONDS``, 5 s), and at most :data:`MAX_WAITING` requests of a process
wait at once; a request beyond them does not wait (it is answered "not applied yet" at
once), so tokens can never hold all of a web process's threads.
"""

from __future__ import annotations

import threading
import time

from cosmos_backend.outbox import stream_head
from cosmos_backend.store import DocumentStore
from hisadmin.core import consistency, keys
from worklists.persistence.generations import active_generation
from worklists.persistence.trackers import read_tracker

POLL_SECONDS = 0.05
# Half of the light web process's eight threads: the others keep serving while projections
# lag (a stopped worker makes every token wait its whole timeout).
MAX_WAITING = 4
_waiting = threading.BoundedSemaphore(MAX_WAITING)


def pending(store: DocumentStore, positions: dict[str, int]) -> dict[str, int]:
    """The streams of ``positions`` the worklists have not applied yet."""
    gen = active_generation(store)
    behind = {}
    for pk, seq in positions.items():
        if not pk.startswith(keys.PATIENT):
            continue
        if read_tracker(store, pk[len(keys.PATIENT):], gen).state.seq < seq:
            behind[pk] = seq
    return behind


def check_exists(store: DocumentStore, positions: dict[str, int]) -> None:
    """:class:`consistency.BadToken` when a position is beyond its stream's head: an event
    that does not exist (a token from another system or store) would never be applied."""
    for pk, seq in positions.items():
        if stream_head(store, pk) < seq:
            raise consistency.BadToken("X-Consistency-Token names a change this system "
                                       "has not recorded.")


def wait_applied(store: DocumentStore, positions: dict[str, int], *,
                 timeout: float) -> bool:
    """True once every stream of ``positions`` is applied; False after ``timeout`` s, or at
    once when :data:`MAX_WAITING` requests are waiting already. Raises
    :class:`consistency.BadToken` (before any wait) for a position beyond its stream's
    head."""
    left = pending(store, positions)
    if not left:
        return True
    check_exists(store, left)  # only what is behind: the common case reads nothing more
    if not _waiting.acquire(blocking=False):
        return False
    try:
        deadline = time.monotonic() + min(timeout, consistency.WAIT_SECONDS)
        while True:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)
            left = pending(store, left)
            if not left:
                return True
    finally:
        _waiting.release()
