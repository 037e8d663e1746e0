"""The change-feed relay as a thread inside a Celery worker: one process less on one machine.

``celery -A hisadmin worker --relay`` runs :class:`worklists.delivery.relay.Relay` in a
daemon thread of the worker process (:class:`RelayStep`, a worker bootstep): it starts once
the worker's pool is up and stops before the pool does on a warm shutdown (SIGTERM, SIGINT),
releasing its leases on the way out, exactly as ``manage.py run_relay`` does on a signal.
The thread is a relay like any other: it takes its fair share of the feed ranges, so
in-worker relays and ``run_relay`` processes split the work between them. An unexpected
error in the relay is logged and the relay starts again after a backoff (its checkpoints
were kept: at least once), rather than taking the worker and its projections down with it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from celery import bootsteps
from django.conf import settings  # lazy: read in build_relay, once Django is set up

if TYPE_CHECKING:
    from worklists.delivery.relay import Relay

log = logging.getLogger(__name__)

RESTART_BACKOFF_MAX = 30.0


def build_relay(*, apply_pages: bool = False, **options: Any) -> Relay:
    """A relay on this process's store handles, publishing to the project's Celery app.

    ``options`` are :class:`~worklists.delivery.relay.Relay`'s keyword arguments (owner,
    lease_ttl, busy_poll, idle_max, page_size, keep_events); ``gather`` is the setting
    ``RELAY_GATHER_MS``'s, ``redrive_after`` ``RELAY_REDRIVE_AFTER_S``'s. ``apply_pages``:
    the relay applies the projections' pages in its own thread instead of sending them
    (a page it cannot apply is sent, and retried by the workers)."""
    # Imported here: the worker loads this module before Django is set up.
    from hisadmin.core.store import get_lease_store, get_store
    from worklists.delivery.relay import Relay, celery_publisher  # (the same reason)

    return Relay(get_store("relay"), get_lease_store(), celery_publisher(apply_pages),
                 gather=settings.RELAY_GATHER_MS / 1000,
                 redrive_after=settings.RELAY_REDRIVE_AFTER_S, **options)


class Sweepers:
    """The sweepers the apps registered (:func:`hisadmin.core.consumers.start_sweepers`),
    running beside a relay and stopped with it."""

    def __init__(self) -> None:
        from hisadmin.core.consumers import start_sweepers  # (Django is set up by now)

        self.running = start_sweepers()

    def stop(self) -> None:
        for sweeper in self.running:
            sweeper.stop()
        self.running = []


class RelayThread:
    """Runs ``relay.run`` in a daemon thread until :meth:`stop`; restarts it after an
    unexpected error (checkpoints kept), with a backoff doubling up to 30 s."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="relay", daemon=True)

    def start(self) -> RelayThread:
        self.thread.start()
        return self

    def _run(self) -> None:
        backoff = 1.0
        while not self.stopping.is_set():
            try:
                self.relay.run(self.stopping)  # releases its leases when it returns or raises
                return
            except Exception:  # noqa: BLE001 - logged; the relay starts again
                log.exception("relay %s failed; starting again in %.0fs", self.relay.owner,
                              backoff)
                self.stopping.wait(backoff)
                backoff = min(backoff * 2, RESTART_BACKOFF_MAX)

    def stop(self, timeout: float = 15.0) -> bool:
        """Ask the relay to stop and wait for it; True once it stopped (leases released)."""
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout)
        stopped = not self.thread.is_alive()
        if not stopped:
            log.warning("relay %s did not stop within %.0fs; its leases expire by themselves",
                        self.relay.owner, timeout)
        return stopped


class RelayStep(bootsteps.StartStopStep):
    """Worker bootstep: the relay thread, enabled by the worker's ``--relay`` option."""

    label = "Relay"
    requires = ("celery.worker.components:Pool",)

    def __init__(self, parent: Any, relay: bool = False, relay_lease_ttl: float = 10.0,
                 **kwargs: Any) -> None:
        self.enabled = bool(relay)
        self.lease_ttl = float(relay_lease_ttl)
        self.running: RelayThread | None = None
        super().__init__(parent, **kwargs)

    def start(self, parent: Any) -> None:
        # With threads (or solo) the tasks run in this process: the relay keeps the events it
        # reads, and the tasks on them need not read them again. A prefork pool's children
        # would never see them.
        in_process = getattr(parent.pool_cls, "__module__", "").rsplit(".", 1)[-1] != "prefork"
        # There, the relay also applies the projections' pages itself: a thread of the same
        # process would, after a round trip through the broker (RELAY_APPLIES_PAGES).
        relay = build_relay(lease_ttl=self.lease_ttl, keep_events=in_process,
                            apply_pages=in_process and settings.RELAY_APPLIES_PAGES)
        log.warning("relay %s running inside the worker (lease ttl %ss)", relay.owner,
                    self.lease_ttl)
        self.running = RelayThread(relay).start()
        self.sweeping: Sweepers | None = Sweepers()

    def stop(self, parent: Any) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None
        if getattr(self, "sweeping", None) is not None:
            self.sweeping.stop()
            self.sweeping = None

    def shutdown(self, parent: Any) -> None:
        self.stop(parent)

    def terminate(self, parent: Any) -> None:
        self.stop(parent)
