"""Every event written, checked against its published schema (docs/events.md): the test
suite's guard that the public form and its schemas never drift apart.

:func:`install` wraps :meth:`cosmos_backend.uow.UnitOfWork.add`, the one way an event
document enters a batch, so each event is checked as it is made, in its public form
(:func:`patients.events_public.public_event`), by a compiled validator per type (a few
microseconds each). What fails is kept in :data:`OFFENDERS`; the test suite's hooks
(tests/conftest.py) fail the test that made it and the run.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema_rs

from cosmos_backend import outbox
from cosmos_backend.store import Document
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from patients.events_public import DATA_MODELS, json_schema, public_event

OFFENDERS: list[str] = []


@functools.cache
def _validator(event_type: str) -> Any:
    return jsonschema_rs.validator_for(json_schema(event_type))


def problems(doc: Document) -> list[str]:
    """What is wrong with an event document's public form against its type's schema
    (empty: nothing; a type with no schema is wrong too)."""
    stored = outbox.event_payload(doc)
    stream = outbox.event_stream(doc)
    kind = str(stored.get("type"))
    if kind not in DATA_MODELS:
        return [f"{kind}: no schema (add its data model to patients.events_public)"]
    patient_id = keys.suffix(stream) if stream.startswith(keys.PATIENT) else None
    event = public_event(stored, patient_id=patient_id)
    return [f"{kind} #{event['seq']} of {stream}: {e.instance_path or '/'}: {e.message}"
            for e in _validator(kind).iter_errors(event)]


def install() -> None:
    """Check every event document added to a unit of work from now on (idempotent)."""
    if getattr(UnitOfWork.add, "checks_events", False):
        return
    add = UnitOfWork.add

    @functools.wraps(add)
    def checked_add(self: UnitOfWork, doc: Document) -> Document:
        if outbox.is_event(doc):
            OFFENDERS.extend(problems(doc))
        return add(self, doc)

    checked_add.checks_events = True  # type: ignore[attr-defined]
    UnitOfWork.add = checked_add  # type: ignore[method-assign]
