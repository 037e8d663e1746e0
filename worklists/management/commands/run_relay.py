"""Run the change-feed relay until SIGINT/SIGTERM (then release its leases and exit)."""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from worklists.delivery.worker_relay import Sweepers, build_relay


class Command(BaseCommand):
    help = "Relay events from the store's change feed to the projection workers."
    # No system checks: they load the whole URL configuration (the API and its schemas,
    # ~25 MB) into a process that serves none of it; `migrate` runs them at deploy time.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--lease-ttl", type=float, default=10.0,
                            help="seconds before a dead relay's ranges are taken over")
        parser.add_argument("--owner", default=None, help="lease owner name (default: host:pid)")
        parser.add_argument("--busy-poll", type=float, default=0.05,
                            help="seconds between polls while changes keep coming")
        parser.add_argument("--idle-max", type=float, default=1.0,
                            help="longest pause between polls when idle")
        parser.add_argument("--page-size", type=int, default=200)

    def handle(self, *args: Any, lease_ttl: float, owner: str | None, busy_poll: float,
               idle_max: float, page_size: int, **options: Any) -> None:
        logging.getLogger("worklists").setLevel(logging.INFO)
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        relay = build_relay(owner=owner, lease_ttl=lease_ttl, busy_poll=busy_poll,
                            idle_max=idle_max, page_size=page_size)
        self.stdout.write(f"relay {relay.owner} running (lease ttl {lease_ttl}s)")
        self.stdout.flush()
        sweeping = Sweepers()
        try:
            relay.run(stop)
        finally:
            sweeping.stop()
