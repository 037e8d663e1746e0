"""Possible duplicate registrations: noting them as patients are registered or corrected,
and records staff's "not the same person" (docs/patients.md, "Finding duplicates")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.events import EventType
from patients.domain.merges import clean_reason  # records staff's reasons, as for a merge
from patients.persistence import duplicates

# The events after which a patient may make (or stop making) a likely pair.
DUPLICATE_EVENTS = (EventType.PATIENT_REGISTERED, EventType.DEMOGRAPHICS_UPDATED)


@dataclass(frozen=True)
class NotePossibleDuplicates:
    patient_id: str
    before: dict[str, str] | None = None  # a correction's previous birthDate / sex


@dataclass(frozen=True)
class MarkNotSamePerson:
    pair_id: str  # the two patients' ids, ordered, joined by a dot
    reason: str


def note_possible_duplicates(cmd: NotePossibleDuplicates, uow: UnitOfWork, *,
                             actor: Actor) -> int:
    """Enter the patient in the births index and note the likely pairs it makes (the
    relay's follow-up after a registration or a correction); idempotent."""
    return duplicates.enter(uow.store, cmd.patient_id, before=cmd.before)


def mark_not_same_person(cmd: MarkNotSamePerson, uow: UnitOfWork, *, actor: Actor) -> None:
    """The pair is two people: no longer listed; a ``NotSamePerson`` event with the reason
    and ``actor``, in one batch. PairNotListed when it is not listed (any more)."""
    reason = clean_reason(cmd.reason)
    duplicates.not_the_same(uow, cmd.pair_id, reason=reason, actor=actor,
                            now=datetime.now(UTC))
