"""A subscription: where to POST which patient events, and whether it is on.

Plain Python: the checks an admin's input must pass, and which events a subscription wants.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

from patients.domain.errors import DomainError, InvalidInput
from patients.domain.events import EventType
from webhooks.domain.receivers import Receiver

MIN_SECRET_LENGTH = 16
MAX_SECRET_LENGTH = 200
MAX_URL_LENGTH = 2000
# The events a subscription may name: those of a patient's own stream (reference data and
# beds live in other streams, which the relay does not send here).
PATIENT_EVENT_TYPES: tuple[EventType, ...] = tuple(
    t
    for t in EventType
    if t
    not in (
        EventType.REFERENCE_ENTRY_ADDED,
        EventType.REFERENCE_ENTRY_CHANGED,
        EventType.BED_CLEANED,
    )
)


class UnknownSubscription(DomainError):
    http_status = 404
    title = "Unknown subscription"


@dataclass(frozen=True, kw_only=True)
class Subscription(Receiver):
    """A receiver (:class:`Receiver`) of signed JSON POSTs at ``url``."""

    KIND: ClassVar[str] = "webhook subscription"

    url: str

    def label(self) -> str:
        return f"{super().label()} ({self.url[:150]})"

    def described(self) -> dict[str, str]:
        return {"url": self.url, **super().described()}


def check_url(url: str) -> str:
    """An absolute http(s) URL with a host, or :class:`InvalidInput` on ``url``."""
    url = (url or "").strip()
    parts = urlsplit(url)
    if len(url) > MAX_URL_LENGTH or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput("The URL must be an absolute http:// or https:// address.", field="url")
    if parts.username or parts.password:
        raise InvalidInput("The URL must not carry a user name or password.", field="url")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise InvalidInput("The URL's port is not valid.", field="url") from None
    return url


def check_events(names: Iterable[str]) -> frozenset[EventType]:
    """Known patient event type names, at least one, or :class:`InvalidInput` on ``events``."""
    allowed = {t.value: t for t in PATIENT_EVENT_TYPES}
    names = list(names or ())
    unknown = [str(n) for n in names if n not in allowed]
    if unknown:
        raise InvalidInput(
            f"Unknown event type(s): {', '.join(sorted(unknown))[:300]}.", field="events"
        )
    if not names:
        raise InvalidInput("Choose at least one event type.", field="events")
    return frozenset(allowed[n] for n in names)


def check_secret(secret: str) -> str:
    """A signing secret of 16 to 200 characters, or :class:`InvalidInput` on ``secret``."""
    if not isinstance(secret, str) or not (MIN_SECRET_LENGTH <= len(secret) <= MAX_SECRET_LENGTH):
        raise InvalidInput(
            f"The secret needs {MIN_SECRET_LENGTH} to {MAX_SECRET_LENGTH} characters.",
            field="secret",
        )
    return secret
