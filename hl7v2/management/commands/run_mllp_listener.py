"""``manage.py run_mllp_listener --port 2575``: take lab results (ORU^R01) over MLLP."""

from __future__ import annotations

import logging
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from hisadmin.core.env import envstr
from hisadmin.core.policy import actor_for, allows
from hisadmin.core.store import get_store
from hl7v2.inbound.listener import results_listener
from hl7v2.inbound.receive import Receiver

log = logging.getLogger("hl7v2.inbound")


def lab_receiver(username: str) -> Receiver:
    """The receiver acting as ``username``, who must be active and allowed to record results
    (``progress_order``: a nurse or clinician); CommandError otherwise."""
    if not username:
        raise CommandError("Set HL7_LAB_USER to the user results are recorded as (a user "
                           "with the nurse or clinician role, e.g. 'lab-system').")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"HL7_LAB_USER {username!r} is not an active user.")
    if not allows(user, "progress_order"):
        raise CommandError(f"HL7_LAB_USER {username!r} may not record results: give it the "
                           "nurse or clinician role.")
    return Receiver(get_store(), actor_for(user),
                    application=getattr(settings, "HL7_SENDING_APPLICATION", "HIS"),
                    facility=getattr(settings, "HL7_SENDING_FACILITY", "HOSPITAL"),
                    time_zone=ZoneInfo(str(settings.HOSPITAL_TIME_ZONE)),
                    senders=frozenset(s.strip() for s in envstr("HL7_LISTENER_SENDERS", "")
                                      .split(",") if s.strip()))


class Command(BaseCommand):
    help = "Listen for ORU^R01 lab results over MLLP and answer each with an ACK."
    requires_system_checks: list[str] = []  # a socket server: the URLconf is not needed

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1",
                            help="address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=2575, help="TCP port (default 2575)")
        parser.add_argument("--lab-user", default=envstr("HL7_LAB_USER", ""),
                            help="the user results are recorded as (default: HL7_LAB_USER)")

    def handle(self, *args: Any, **options: Any) -> None:
        receiver = lab_receiver(options["lab_user"])
        listener = results_listener(receiver, options["host"], options["port"])
        host, port = listener.server_address[:2]
        self.stdout.write(f"MLLP listener for ORU^R01 on {host}:{port} as "
                          f"{receiver.actor.username}", ending="\n")
        self.stdout.flush()
        try:
            listener.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            listener.server_close()
