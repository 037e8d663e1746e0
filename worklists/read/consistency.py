"""Waiting for the projections to apply a consistency token (read-your-writes).

A token names, per event stream, the last event a command committed
(:mod:`hisadmin.core.consistency`). A patient stream is applied when the patient's tracker
in the active generation has reached that sequence number: one point read per stream per
look. Streams no worklist projects (reference data) count as applied.
"""

from __future__ import annotations

import time

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from worklists.persistence.generations import active_generation
from worklists.persistence.trackers import read_tracker

POLL_SECONDS = 0.05


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


def wait_applied(store: DocumentStore, positions: dict[str, int], *,
                 timeout: float) -> bool:
    """True once every stream of ``positions`` is applied; False after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    left = dict(positions)
    while True:
        left = pending(store, left)
        if not left:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)
