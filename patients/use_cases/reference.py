"""Reference data edits: an admin's, or the shipped files' through ``load_reference_data``.

Each edit is one batch in the type's partition: the entry and a ``ReferenceEntryAdded`` /
``ReferenceEntryChanged`` event naming who did it. An entry is never deleted: retiring it
(``active`` false) keeps it on the records that name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import validate_id
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain import reference as rules
from patients.domain.errors import InvalidInput, ReferenceExists, UnknownReference
from patients.domain.events import ReferenceEntrySaved
from patients.persistence import beds, reference
from patients.persistence.reference import ReferenceEntries


@dataclass(frozen=True)
class SaveReferenceEntry:
    """Add an entry (``create``) or change one. ``fields``: name, active and the type's own
    fields (a ward's ``departmentId`` and ``beds``…); a field given as None is removed."""

    type_name: str
    code: str
    fields: dict[str, Any] = field(default_factory=dict)
    create: bool = False
    expected_version: str | None = None


def _check(cmd: SaveReferenceEntry, entries: ReferenceEntries,
           previous: dict[str, Any] | None, entry: dict[str, Any]) -> None:
    if cmd.type_name not in reference.TYPES:
        raise UnknownReference(f"Unknown reference data type {cmd.type_name!r}.",
                               field="type_name")
    try:
        validate_id(cmd.code)
    except errors.InvalidId:
        raise InvalidInput("Use letters, digits and dashes only.", field="code") from None
    if not str(entry.get("name") or "").strip():
        raise InvalidInput("A name is required.", field="name")
    if cmd.type_name == "Ward" and previous is not None:
        gone = [b for b in previous.get("beds", []) if b not in entry.get("beds", [])]
        occupied = [b for b in gone if beds.is_occupied(entries.uow.store, ward_id=cmd.code,
                                                        bed=b)]
        if occupied:
            raise InvalidInput(f"Bed {', '.join(occupied)} is occupied; transfer or discharge "
                               "its patient before removing it.", field="beds")
    named = set(rules.REFERENCES.get(cmd.type_name, {}).values())
    rules.check_entry(cmd.type_name, entry, reference.codes(entries.uow.store, sorted(named)))


def save_reference_entry(cmd: SaveReferenceEntry, uow: UnitOfWork, *,
                         actor: Actor) -> dict[str, Any]:
    """Add or change one entry; returns it as stored. ReferenceExists when ``create`` finds
    the code taken; StaleWrite when it changed since ``expected_version``."""
    now = datetime.now(UTC)
    entries = ReferenceEntries(uow)
    previous = entries.load(cmd.type_name, cmd.code) if cmd.type_name in reference.TYPES \
        else None
    if cmd.create and previous is not None:
        raise ReferenceExists("An entry with this code exists; edit it instead.", field="code")
    if not cmd.create and previous is None:
        raise UnknownReference(f"No {cmd.type_name} {cmd.code!r} to change.", field="code")
    entries.expect(cmd.type_name, cmd.code, cmd.expected_version)
    entry = {"active": True, **(previous or {}), "code": cmd.code}
    for name, value in cmd.fields.items():
        if value is None:
            entry.pop(name, None)
        else:
            entry[name] = value
    _check(cmd, entries, previous, entry)
    if entry != previous:
        entries.save(cmd.type_name, entry, [ReferenceEntrySaved(
            type_name=cmd.type_name, code=cmd.code, entry=entry, previous=previous)],
            actor=actor, now=now)
    return entry


def load_reference_data(uow: UnitOfWork, *, actor: Actor) -> Iterator[tuple[str, str, str]]:
    """Bring the store's reference data up to the shipped files; yields (type, code,
    created | updated | unchanged). Idempotent; each change is an edit with its event.

    The files are checked as a whole first: an entry that breaks a rule (a medication class
    that is no Allergen code…) stops the load before anything is written, with an
    InvalidReferenceEntry naming the type, the code and the field."""
    shipped = list(reference.entries_from_files())
    rules.check_all(shipped)
    for type_name, entry in shipped:
        code = entry["code"]
        stored = ReferenceEntries(uow).load(type_name, code)
        wanted = {"active": True, **entry}
        if stored == wanted:
            yield type_name, code, "unchanged"
            continue
        fields = {k: wanted.get(k) for k in {*wanted, *(stored or {})} if k != "code"}
        save_reference_entry(SaveReferenceEntry(type_name, code, fields,
                                                create=stored is None), uow, actor=actor)
        yield type_name, code, "created" if stored is None else "updated"
