"""Beds left behind: after a discharge or a transfer out, the bed's hold is given back.

This runs after the command, fed by its event (see :mod:`patients.tasks`), so a discharge
or a transfer writes nothing to the bed partition on its own path. Giving the bed back is
idempotent (only the hold of that very admission is removed), and a bed whose giving back is
late or lost can still be taken: a new admission finds its holder's stay over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.events import EventType
from patients.persistence import beds

# The events after which a bed may have been left, as the relay's consumers filter them.
BED_LEAVING_EVENTS = (EventType.ADMISSION_ENDED, EventType.PATIENT_TRANSFERRED)


@dataclass(frozen=True)
class GiveBedBack:
    ward_id: str
    bed: str
    admission_id: str


def bed_left(event_type: str, data: dict[str, Any]) -> GiveBedBack | None:
    """The bed an event's admission left, if any."""
    if event_type == EventType.ADMISSION_ENDED and data.get("bed"):
        return GiveBedBack(data["wardId"], data["bed"], data["admissionId"])
    if event_type == EventType.PATIENT_TRANSFERRED and data.get("fromBed"):
        if (data.get("toWard"), data.get("toBed")) != (data.get("fromWard"), data["fromBed"]):
            return GiveBedBack(data["fromWard"], data["fromBed"], data["admissionId"])
    return None


def give_bed_back(cmd: GiveBedBack, uow: UnitOfWork, *, actor: Actor) -> None:
    """Remove the admission's hold on the bed (nothing if someone else holds it now)."""
    beds.free(uow.store, ward_id=cmd.ward_id, bed=cmd.bed, admission_id=cmd.admission_id)
