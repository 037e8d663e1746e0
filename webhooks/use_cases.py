"""What admins do with webhooks: subscribe, list, switch on or off, remove, replay.

Each command writes one small document in the webhooks' own partition, attributed to the
acting admin (``createdBy`` / ``changedBy``); there is no patient record and no event, so the
store is the unit of work. Callers have asked the policy (``manage_webhooks``) first.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from cosmos_backend.store import DocumentStore
from hisadmin.core.actor import Actor
from webhooks.domain.subscriptions import (
    Subscription,
    check_events,
    check_secret,
    check_url,
)
from webhooks.persistence import deadletters, subscriptions


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
    cmd: Subscribe, store: DocumentStore, *, actor: Actor, now: datetime | None = None
) -> tuple[Subscription, str]:
    """Store a new active subscription; returns it and its secret (the only time it is
    given back)."""
    url = check_url(cmd.url)
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
    return subscriptions.add(store, sub, secret, actor=_who(actor)), secret


def set_active(
    cmd: SetActive, store: DocumentStore, *, actor: Actor, now: datetime | None = None
) -> Subscription:
    """Switch deliveries on or off. Switched on again, it starts with the events that occur
    from now: what happened while it was off is not sent."""
    sub = subscriptions.get(store, cmd.subscription_id)
    now = now or datetime.now(UTC)
    changed = sub
    if cmd.active != sub.active:
        changed = Subscription(
            **{
                **sub.__dict__,
                "active": cmd.active,
                "active_since": now if cmd.active else sub.active_since,
            }
        )
    return subscriptions.replace(
        store, changed, actor=_who(actor), now=now, if_match=cmd.expected_version
    )


def unsubscribe(cmd: Unsubscribe, store: DocumentStore, *, actor: Actor) -> None:
    """Remove the subscription; deliveries queued for it find it gone and stop. Its trackers
    are left to the patients' partitions (a few bytes each); its dead letters expire."""
    subscriptions.remove(store, cmd.subscription_id, if_match=cmd.expected_version)


def replay_dead_letters(
    letter_ids: list[str] | None, store: DocumentStore, *, actor: Actor, send: Callable[[str], None]
) -> int:
    """Queue the named dead letters (all of them for None) for one more delivery each;
    returns how many were queued."""
    letters = deadletters.all_letters(store)
    chosen = [x for x in letters if letter_ids is None or x.id in letter_ids]
    for letter in chosen:
        send(letter.id)
    return len(chosen)
