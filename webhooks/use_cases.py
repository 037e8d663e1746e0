"""What admins do with webhooks: subscribe, list, switch on or off, remove, replay.

Each command writes one small document in the webhooks' own partition, attributed to the
acting admin (``createdBy`` / ``changedBy``); there is no patient record and no event, so the
store is the unit of work. Every change and replay is also a security event with its actor
(:mod:`webhooks.receiver_changes`, shared with the HL7 destinations). Callers have asked the
policy (``manage_webhooks``) first.
"""

from __future__ import annotations

import os
import secrets
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from cosmos_backend.store import DocumentStore
from hisadmin.core.actor import Actor
from webhooks import receiver_changes
from webhooks.domain import addresses
from webhooks.domain.subscriptions import (
    Subscription,
    check_events,
    check_secret,
    check_url,
)
from webhooks.persistence import deadletters, subscriptions

Resolve = Callable[[str, int], list[str]]  # (host, port) → its addresses, [] when none


def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to now; none when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


def check_reachable(url: str, resolve: Resolve | None = None) -> None:
    """The URL's host resolves only to addresses deliveries may go to (the rules of
    :mod:`webhooks.domain.addresses` with ``WEBHOOK_ALLOWED_NETWORKS``, read per call as the
    workers do), or :class:`InvalidInput` on ``url`` naming the rule. The delivery checks
    again: a name may point elsewhere later."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    extra = addresses.parse_networks(os.environ.get("WEBHOOK_ALLOWED_NETWORKS", ""))
    found = (resolve or resolve_host)(parts.hostname or "", port)
    addresses.check_destination(found, extra)


@dataclass(frozen=True)
class Subscribe:
    url: str
    events: list[str]
    secret: str | None = None  # None: one is generated (and shown once)


@dataclass(frozen=True)
class SetActive:
    subscription_id: str
    active: bool
    expected_version: str  # the ETag the admin saw


@dataclass(frozen=True)
class Unsubscribe:
    subscription_id: str
    expected_version: str | None = None


def _who(actor: Actor) -> dict[str, str]:
    return {"id": actor.id, "username": actor.username}


def subscribe(
    cmd: Subscribe, store: DocumentStore, *, actor: Actor, now: datetime | None = None,
    resolve: Resolve | None = None,
) -> tuple[Subscription, str]:
    """Store a new active subscription; returns it and its secret (the only time it is
    given back). A URL whose host resolves to an address deliveries may not go to is
    :class:`InvalidInput` on ``url``."""
    url = check_url(cmd.url)
    check_reachable(url, resolve)
    events = check_events(cmd.events)
    secret = secrets.token_urlsafe(32) if cmd.secret is None else check_secret(cmd.secret)
    now = now or datetime.now(UTC)
    sub = Subscription(
        id=uuid.uuid4().hex,
        url=url,
        events=events,
        active=True,
        active_since=now,
        created_at=now,
        created_by=actor.username,
    )
    stored = subscriptions.add(store, sub, secret, actor=_who(actor))
    receiver_changes.added(stored, actor=actor)
    return stored, secret


def set_active(
    cmd: SetActive, store: DocumentStore, *, actor: Actor, now: datetime | None = None,
    resolve: Resolve | None = None,
) -> Subscription:
    """Switch deliveries on or off. Switched on again, it starts with the events that occur
    from now: what happened while it was off is not sent; and its URL is checked again as
    on creation (:class:`InvalidInput` on ``url``: the rules or the name may have changed)."""
    sub = subscriptions.get(store, cmd.subscription_id)
    if cmd.active and not sub.active:
        check_reachable(sub.url, resolve)
    now = now or datetime.now(UTC)
    stored = subscriptions.replace(
        store, sub.switched(cmd.active, now), actor=_who(actor), now=now,
        if_match=cmd.expected_version)
    receiver_changes.changed(sub, stored, actor=actor)
    return stored


def unsubscribe(cmd: Unsubscribe, store: DocumentStore, *, actor: Actor) -> None:
    """Remove the subscription; deliveries queued for it find it gone and stop. Its trackers
    are left to the patients' partitions (a few bytes each); its dead letters expire."""
    sub = subscriptions.get(store, cmd.subscription_id)
    subscriptions.remove(store, cmd.subscription_id, if_match=cmd.expected_version)
    receiver_changes.removed(sub, actor=actor)


def replay_dead_letters(
    letter_ids: list[str] | None, store: DocumentStore, *, actor: Actor, send: Callable[[str], None]
) -> int:
    """Queue the named dead letters (all of them for None) for one more delivery each;
    returns how many were queued."""
    letters = deadletters.all_letters(store)
    chosen = [x for x in letters if letter_ids is None or x.id in letter_ids]
    for letter in chosen:
        send(letter.id)
    receiver_changes.replayed(Subscription.KIND, [x.id for x in chosen], actor=actor,
                              everything=letter_ids is None)
    return len(chosen)
