"""What admins do with HL7 destinations: add, list, change, remove, replay.

Each command writes one small document in the interface's own partition, attributed to the
acting admin, and is a security event with its actor as a webhook subscription's change is
(:mod:`webhooks.receiver_changes`: the two are receivers alike); callers have asked the
policy (``manage_webhooks``: the same admins) first.
The address rules of the webhooks apply (:mod:`webhooks.domain.addresses`), with
``HL7_ALLOWED_NETWORKS`` naming an engine's network besides ``WEBHOOK_ALLOWED_NETWORKS``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from cosmos_backend.store import DocumentStore
from hisadmin.core.actor import Actor
from hl7v2.outbound import mllp
from hl7v2.outbound.destinations import (
    Destination,
    check_events,
    check_host,
    check_name,
    check_port,
)
from hl7v2.persistence import store
from patients.domain.errors import InvalidInput
from webhooks import receiver_changes
from webhooks import use_cases as webhook_use_cases
from webhooks.domain import addresses

Resolve = Callable[[str, int], list[str]]


@dataclass(frozen=True)
class AddDestination:
    name: str
    host: str
    port: int
    events: list[str]


@dataclass(frozen=True)
class ChangeDestination:
    destination_id: str
    expected_version: str
    name: str | None = None
    host: str | None = None
    port: int | None = None
    events: list[str] | None = None
    active: bool | None = None


def check_reachable(host: str, port: int, resolve: Resolve | None = None) -> None:
    """The host resolves only to addresses messages may go to, or :class:`InvalidInput` on
    ``host`` naming the rule; the connection checks again."""
    found = (resolve or webhook_use_cases.resolve_host)(host, port)
    try:
        addresses.check_destination(found, mllp.allowed_networks())
    except InvalidInput as exc:
        raise InvalidInput(str(exc).replace("The URL's host", "The host").replace(
            "WEBHOOK_ALLOWED_NETWORKS", "HL7_ALLOWED_NETWORKS (or WEBHOOK_ALLOWED_NETWORKS)"),
            field="host") from None


def _who(actor: Actor) -> dict[str, str]:
    return {"id": actor.id, "username": actor.username}


def add_destination(cmd: AddDestination, store_: DocumentStore, *, actor: Actor,
                    now: datetime | None = None, resolve: Resolve | None = None) -> Destination:
    now = now or datetime.now(UTC)
    name, host, port = check_name(cmd.name), check_host(cmd.host), check_port(cmd.port)
    events = check_events(cmd.events)
    check_reachable(host, port, resolve)
    dest = Destination(id=uuid.uuid4().hex, name=name, host=host, port=port, events=events,
                       active=True, active_since=now, created_at=now,
                       created_by=actor.username)
    stored = store.add(store_, dest, actor=_who(actor))
    receiver_changes.added(stored, actor=actor)
    return stored


def change_destination(cmd: ChangeDestination, store_: DocumentStore, *, actor: Actor,
                       now: datetime | None = None,
                       resolve: Resolve | None = None) -> Destination:
    """Switching a destination on again starts it with the events that happen next."""
    now = now or datetime.now(UTC)
    dest = store.get(store_, cmd.destination_id)
    new = replace(
        dest,
        name=dest.name if cmd.name is None else check_name(cmd.name),
        host=dest.host if cmd.host is None else check_host(cmd.host),
        port=dest.port if cmd.port is None else check_port(cmd.port),
        events=dest.events if cmd.events is None else check_events(cmd.events))
    new = new.switched(dest.active if cmd.active is None else bool(cmd.active), now)
    if new.active and (not dest.active or (new.host, new.port) != (dest.host, dest.port)):
        check_reachable(new.host, new.port, resolve)
    stored = store.replace(store_, new, actor=_who(actor), now=now,
                           if_match=cmd.expected_version)
    receiver_changes.changed(dest, stored, actor=actor)
    return stored


def remove_destination(destination_id: str, store_: DocumentStore, *, actor: Actor,
                       expected_version: str | None = None) -> None:
    """Delete it (UnknownDestination when there is none), recorded with ``actor``."""
    dest = store.get(store_, destination_id)
    store.remove(store_, destination_id, if_match=expected_version)
    receiver_changes.removed(dest, actor=actor)


def replay(control_ids: list[str] | None, store_: DocumentStore, *, actor: Actor,
           send: Callable[[str], None]) -> list[str]:
    """Queue the dead letters named (all of them when None) for one more attempt each."""
    dead = [e.control_id for e in store.entries(store_, status="dead", limit=10_000)]
    chosen = dead if control_ids is None else [c for c in control_ids if c in set(dead)]
    for cid in chosen:
        send(cid)
    receiver_changes.replayed(Destination.KIND, chosen, actor=actor,
                              everything=control_ids is None)
    return chosen
