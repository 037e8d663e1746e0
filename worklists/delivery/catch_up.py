"""Beside every relay, once as it starts: the wards' shift rows brought up to the wards'
records (:func:`worklists.persistence.ward_shifts.catch_up`).

A store upgraded from a release before the shift rows has none, and My patients would list
nobody's beds until each ward's nurses were next assigned or an operator rebuilt the views;
this fills them on the first start. After that it changes nothing and costs two queries per
ward and generation. An error is logged; the next relay start tries again.
"""

from __future__ import annotations

import logging
import threading

from hisadmin.core.store import get_store
from worklists.persistence.ward_shifts import catch_up

log = logging.getLogger(__name__)


class ShiftRowsCatchUp:
    """Runs the catch-up once on a daemon thread (the relay does not wait for it)."""

    def __init__(self) -> None:
        self.thread = threading.Thread(target=self._run, name="shift-rows-catch-up",
                                       daemon=True)

    def start(self) -> ShiftRowsCatchUp:
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            changed = catch_up(get_store("relay"))
        except Exception as exc:  # noqa: BLE001 - logged; the next start tries again
            log.warning("wards' shift rows not caught up: %s", type(exc).__name__)
            return
        if changed:
            log.info("wards' shift rows caught up: %s written", changed)

    def stop(self, timeout: float = 10.0) -> None:
        self.thread.join(timeout)


def start_thread() -> ShiftRowsCatchUp:
    return ShiftRowsCatchUp().start()
