"""What a delivery sends: its JSON body, its signature and its headers.

The body is serialised once and signed as bytes; the receiver checks the HMAC over the raw
body it received, before parsing it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

SIGNATURE_HEADER = "X-HIS-Signature"
DELIVERY_HEADER = "X-HIS-Delivery"
EVENT_HEADER = "X-HIS-Event"
SIGNATURE_PREFIX = "sha256="


def body(event: dict[str, Any]) -> bytes:
    """The delivery body of one event: its public form
    (:func:`patients.events_public.public_event`, docs/events.md), serialised once."""
    return json.dumps(event, separators=(",", ":"), sort_keys=True).encode()


def signature(raw_body: bytes, secret: str) -> str:
    """``sha256=<hex HMAC-SHA256 of the raw body with the secret>``."""
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()


def verify(raw_body: bytes, secret: str, header: str) -> bool:
    """What a receiver does: compare in constant time."""
    return hmac.compare_digest(signature(raw_body, secret), header or "")


def delivery_id(subscription_id: str, stream: str, seq: int) -> str:
    """Stable per event and subscription: a redelivery carries the same id."""
    return f"{subscription_id}.{stream}.{seq:010d}"


def headers(raw_body: bytes, secret: str, *, delivery: str, event_type: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "HIS-Webhooks/1",
        SIGNATURE_HEADER: signature(raw_body, secret),
        DELIVERY_HEADER: delivery,
        EVENT_HEADER: event_type,
    }


def backoff(attempt: int, *, base: float = 1.0, cap: float = 300.0) -> float:
    """Seconds before attempt ``attempt + 1`` (1, 2, 4, … capped)."""
    return float(min(cap, base * (2 ** max(0, attempt - 1))))
