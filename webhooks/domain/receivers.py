"""A receiver: what webhook subscriptions and HL7 destinations have in common. Plain Python.

Both are a place outside the hospital's record that patient events are sent to: the events
it wants, whether it is on (and since when: events that occurred before are never sent),
who added it, and the stored document's version. What differs is the address (a URL; an
engine's host and port with a name) and the wire (signed JSON; ADT over MLLP).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import ClassVar, Self

from patients.domain.events import EVENT_LABELS, EventType


@dataclass(frozen=True, kw_only=True)
class Receiver:
    """``active_since``: events that occurred before it are never sent (a new or re-enabled
    receiver starts with what happens next)."""

    KIND: ClassVar[str] = "receiver"  # how people and security events name the kind

    id: str
    events: frozenset[EventType]
    active: bool
    active_since: datetime
    created_at: datetime
    created_by: str  # the admin's username
    version: str | None = None  # the stored document's etag

    def wants(self, event_type: str) -> bool:
        return self.active and event_type in self.events

    def switched(self, active: bool, now: datetime) -> Self:
        """Switched on or off; switched on again, it starts with the events from ``now``."""
        if active == self.active:
            return self
        return replace(self, active=active,
                       active_since=now if active else self.active_since)

    def label(self) -> str:
        """How a security event names it: its kind and what tells it apart."""
        return f"{self.KIND} {self.id[:8]}"

    def described(self) -> dict[str, str]:
        """What an admin sees of it, field by field: a change is said as before → after."""
        return {"events": ", ".join(sorted(EVENT_LABELS.get(e, e.value) for e in self.events)),
                "active": "yes" if self.active else "no"}


def differences(before: Receiver, after: Receiver) -> str:
    """``"active: yes → no; port: 2575 → 2576"``: what changed, in the described fields."""
    old, new = before.described(), after.described()
    return "; ".join(f"{k}: {old.get(k, '—')} → {new.get(k, '—')}"
                     for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k))
