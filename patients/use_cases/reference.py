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


@dataclass
class ReferencePlan:
    """What loading a set of reference data would change: per entry ``(type, code)``, the
    entry to save, with the fields that change; and the entries to retire."""

    added: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    changed: list[tuple[str, dict[str, Any], list[str]]] = field(default_factory=list)
    retired: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.retired)


def _where(sourced: list[Any], exc: rules.InvalidReferenceEntry) -> str:
    for item in sourced:
        if item.type_name == exc.type_name and item.entry.get("code") == exc.code:
            return f"{item.where}: "
    return ""


def plan_reference_data(store: Any, sourced: list[Any], *, retire: bool) -> ReferencePlan:
    """Check ``sourced`` entries (``type_name``, ``entry`` and a ``where`` for messages) as a
    whole — every rule of each type, codes unique, references resolved within the set or
    against what is stored — and say what loading them would change. ``retire``: the set is
    the whole truth for its types, so stored entries it lacks are retired (never deleted:
    records keep naming them). Nothing is written; an InvalidReferenceEntry names the file,
    line, entry and field."""
    pairs = [(item.type_name, item.entry) for item in sourced]
    try:
        rules.check_all(pairs, reference.codes(store, list(reference.TYPES)))
    except rules.InvalidReferenceEntry as exc:
        where = _where(sourced, exc)
        if where:
            exc.args = (where + str(exc),)  # the same error, saying where in which file
        raise
    plan = ReferencePlan()
    given: dict[str, set[str]] = {}
    for type_name, entry in pairs:
        given.setdefault(type_name, set()).add(entry["code"])
        stored = reference.all_of(store, type_name).get(entry["code"])
        wanted = {"active": True, **entry}
        if stored is None:
            plan.added.append((type_name, wanted))
        elif stored == wanted:
            plan.unchanged += 1
        else:
            fields = sorted(k for k in {*wanted, *stored} if stored.get(k) != wanted.get(k))
            plan.changed.append((type_name, wanted, fields))
    if retire:
        for type_name, codes in given.items():
            for code, stored in sorted(reference.all_of(store, type_name).items()):
                if code not in codes and stored.get("active", True):
                    plan.retired.append((type_name, code))
    return plan


def apply_reference_plan(plan: ReferencePlan, uow: UnitOfWork, *, actor: Actor
                         ) -> Iterator[tuple[str, str, str]]:
    """Make the plan's changes, each an edit with its event and the actor; yields (type,
    code, created | updated | retired)."""
    for type_name, wanted in plan.added:
        save_reference_entry(SaveReferenceEntry(
            type_name, wanted["code"], {k: v for k, v in wanted.items() if k != "code"},
            create=True), uow, actor=actor)
        yield type_name, wanted["code"], "created"
    for type_name, wanted, _ in plan.changed:
        stored = ReferenceEntries(uow).load(type_name, wanted["code"]) or {}
        fields = {k: wanted.get(k) for k in {*wanted, *stored} if k != "code"}
        save_reference_entry(SaveReferenceEntry(type_name, wanted["code"], fields), uow,
                             actor=actor)
        yield type_name, wanted["code"], "updated"
    for type_name, code in plan.retired:
        save_reference_entry(SaveReferenceEntry(type_name, code, {"active": False}), uow,
                             actor=actor)
        yield type_name, code, "retired"


@dataclass(frozen=True)
class _Shipped:
    type_name: str
    entry: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.type_name}.json (shipped)"


def load_reference_data(uow: UnitOfWork, *, actor: Actor) -> Iterator[tuple[str, str, str]]:
    """Bring the store's reference data up to the shipped files; yields (type, code,
    created | updated | unchanged). Idempotent; each change is an edit with its event;
    entries an admin added are kept (the shipped files are not the whole truth).

    The files are checked as a whole first: an entry that breaks a rule (a medication class
    that is no Allergen code…) stops the load before anything is written, with an
    InvalidReferenceEntry naming the type, the code and the field."""
    shipped = [_Shipped(t, e) for t, e in reference.entries_from_files()]
    plan = plan_reference_data(uow.store, shipped, retire=False)
    yield from apply_reference_plan(plan, uow, actor=actor)
    for _ in range(plan.unchanged):
        yield "", "", "unchanged"
