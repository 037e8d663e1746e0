"""An HL7 destination: an interface engine's MLLP channel and the events it receives.

Plain Python: the checks an admin's input must pass, which patient event becomes which ADT
trigger event, and the message control id a destination sees for an event.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from patients.domain.errors import DomainError, InvalidInput
from patients.domain.events import EventType
from webhooks.domain.receivers import Receiver

# Which ADT trigger event each patient event is sent as (docs/hl7.md#the-message-profile).
TRIGGERS: dict[EventType, str] = {
    EventType.PATIENT_REGISTERED: "A04",
    EventType.DEMOGRAPHICS_UPDATED: "A08",
    EventType.ALLERGY_ADDED: "A08",
    EventType.ALLERGY_REMOVED: "A08",
    EventType.NO_KNOWN_ALLERGIES_RECORDED: "A08",
    EventType.ADMISSION_STARTED: "A01",
    EventType.PATIENT_TRANSFERRED: "A02",
    EventType.ADMISSION_ENDED: "A03",
    EventType.PATIENT_MERGED: "A40",  # in the retired record's stream; PID the survivor
}
NAME_MAX = 100
CONTROL_ID_LENGTH = 20  # MSH-10 is an ST of 20 characters in v2.5.1


class UnknownDestination(DomainError):
    http_status = 404
    title = "Unknown HL7 destination"


@dataclass(frozen=True, kw_only=True)
class Destination(Receiver):
    """A receiver (:class:`Receiver`) of ADT messages: an engine's MLLP channel."""

    KIND: ClassVar[str] = "HL7 destination"

    name: str
    host: str
    port: int

    def label(self) -> str:
        return f"{super().label()} ({self.name})"

    def described(self) -> dict[str, str]:
        return {"name": self.name, "host": self.host, "port": str(self.port),
                **super().described()}


def control_id(destination_id: str, stream: str, seq: int) -> str:
    """MSH-10: the same for every attempt and replay of one event to one destination (the
    engine deduplicates on it), different across destinations; 20 characters of base32."""
    digest = hashlib.sha256(f"{destination_id}.{stream}.{seq}".encode()).digest()
    return base64.b32encode(digest).decode()[:CONTROL_ID_LENGTH]


def check_name(name: str) -> str:
    name = " ".join(str(name or "").split())
    if not name or len(name) > NAME_MAX:
        raise InvalidInput(f"Give the destination a name of 1 to {NAME_MAX} characters.",
                           field="name")
    return name


def check_host(host: str) -> str:
    host = str(host or "").strip()
    if not host or len(host) > 253 or any(c in host for c in " /@?#"):
        raise InvalidInput("The host is a name or an IP address, e.g. engine.hospital.local.",
                           field="host")
    return host


def check_port(port: object) -> int:
    try:
        value = int(str(port))
    except ValueError:
        value = 0
    if not 1 <= value <= 65535:
        raise InvalidInput("The port is a number from 1 to 65535 (MLLP often 2575).",
                           field="port")
    return value


def check_events(names: Iterable[str]) -> frozenset[EventType]:
    """Names of events an ADT message is made of, at least one, or :class:`InvalidInput`."""
    allowed = {t.value: t for t in TRIGGERS}
    names = [str(n) for n in (names or ())]
    unknown = sorted(n for n in names if n not in allowed)
    if unknown:
        raise InvalidInput(f"Not an event sent as ADT: {', '.join(unknown)[:300]}.",
                           field="events")
    if not names:
        raise InvalidInput("Choose at least one event.", field="events")
    return frozenset(allowed[n] for n in names)
