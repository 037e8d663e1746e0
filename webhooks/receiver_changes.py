"""Every change to a receiver (a webhook subscription, an HL7 destination) and every replay
of its dead letters, attributed: a security event with the acting admin, the receiver and
what changed (before → after), and a log line with ids only. These feeds carry every
patient's identity and whereabouts, so who pointed them where is kept with who changed
whose roles (``accounts.models.SecurityEvent``).

The receiver's own document is in the store and the event in Django's database: the event
is written once the store has taken the change, so a refused change records nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from accounts.models import SecurityEvent
from hisadmin.core.actor import Actor
from webhooks.domain.receivers import Receiver, differences

log = logging.getLogger(__name__)


def _described(receiver: Receiver) -> str:
    return "; ".join(f"{k}: {v}" for k, v in receiver.described().items())


def added(receiver: Receiver, *, actor: Actor) -> None:
    SecurityEvent.record(actor, SecurityEvent.FEED_ADDED, receiver.label(),
                         _described(receiver))
    log.info("%s %s added by %s", receiver.KIND, receiver.id, actor.id)


def changed(before: Receiver, after: Receiver, *, actor: Actor) -> None:
    """Recorded when something an admin sees changed (not a bare re-save)."""
    said = differences(before, after)
    if not said:
        return
    SecurityEvent.record(actor, SecurityEvent.FEED_CHANGED, after.label(), said)
    log.info("%s %s changed by %s", after.KIND, after.id, actor.id)


def removed(receiver: Receiver, *, actor: Actor) -> None:
    SecurityEvent.record(actor, SecurityEvent.FEED_DELETED, receiver.label(),
                         f"deleted; was {_described(receiver)}")
    log.info("%s %s deleted by %s", receiver.KIND, receiver.id, actor.id)


def replayed(kind: str, ids: Sequence[str], *, actor: Actor, everything: bool) -> None:
    """Dead letters queued again (``everything``: the admin asked for all of them)."""
    if SecurityEvent.replay(actor, kind, ids, everything=everything) is not None:
        log.info("%d %s dead letter(s) replayed by %s", len(ids), kind, actor.id)


def history(receiver: Receiver) -> list[SecurityEvent]:
    """The recorded changes of ``receiver``, newest first (its pages show them)."""
    return list(SecurityEvent.objects.filter(
        target__startswith=Receiver.label(receiver))[:50])
