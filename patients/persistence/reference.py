"""Reference data in ``R_<Type>`` partitions: one document per entry (id = code), and the
type's event stream (its edits, with who made them) in the same partition.

Commands read reference data from one per-process cache, never from the store on every
call: a type's entries are kept with the sequence number of its stream (the version stamp
that every edit bumps, in the edit's own batch); after ``CHECK_SECONDS`` one point read of
the stream tells whether they are still current, and only a changed type is read again.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import EVENT_DOC_TYPE, STREAM_ID, append_events
from cosmos_backend.store import Cond, DocumentStore, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import Actor
from hisadmin.core.cache import ExpiringCache
from patients.domain.errors import UnknownReference
from patients.domain.events import Event
from patients.domain.units import DOSE_DIMENSIONS

DATA_DIR = Path(__file__).resolve().parents[1] / "reference_data"
# Loaded in this order: the types a medication or a lab test names come before them.
TYPES = ("Department", "Ward", "Allergen", "Unit", "Route", "Frequency", "Medication",
         "Modality", "BodyPart", "LabTest")
REFERENCE = "Reference"
CHECK_SECONDS = 5.0  # how long a process trusts its copy before checking the stamp

Entries = dict[str, dict[str, Any]]


@dataclass
class _Copies:
    """One store's reference data in this process."""

    fresh: ExpiringCache[tuple[int, Entries]] = field(
        default_factory=lambda: ExpiringCache(CHECK_SECONDS))
    known: dict[str, tuple[int, Entries]] = field(default_factory=dict)  # kept past expiry


# Per store object: a store that is gone (tests make one each) takes its copies with it.
_copies: weakref.WeakKeyDictionary[DocumentStore, _Copies] = weakref.WeakKeyDictionary()


def _copies_of(store: DocumentStore) -> _Copies:
    copies = _copies.get(store)
    if copies is None:
        copies = _copies.setdefault(store, _Copies())
    return copies


def entries_from_files() -> Iterator[tuple[str, dict[str, Any]]]:
    """The reference data shipped with the product, type by type."""
    for type_name in TYPES:
        for entry in json.loads((DATA_DIR / f"{type_name}.json").read_text()):
            yield type_name, entry


# ------------------------------------------------------------------ the cache
def _stamp(store: DocumentStore, type_name: str) -> int:
    stream = store.try_read(keys.reference(type_name), STREAM_ID)
    return 0 if stream is None else int(stream["docContents"]["seq"])


def _read(store: DocumentStore, type_name: str, known: dict[str, tuple[int, Entries]]
          ) -> tuple[int, Entries]:
    stamp = _stamp(store, type_name)
    last = known.get(type_name)
    if last is not None and stamp and last[0] == stamp:
        return last  # unchanged since we read it (stamp 0: written without events, re-read)
    docs = store.query_all(keys.reference(type_name), Query())
    entries = {d["id"]: d["docContents"] for d in docs if d["docType"] == REFERENCE}
    known[type_name] = (stamp, entries)
    return stamp, entries


def all_of(store: DocumentStore, type_name: str) -> Entries:
    """Every entry of a type by code, retired ones included (from the cache)."""
    copies = _copies_of(store)
    return copies.fresh.get(type_name, lambda: _read(store, type_name, copies.known))[1]


def get(store: DocumentStore, type_name: str, code: str, *, field: str) -> dict[str, Any]:
    """An entry that may be chosen now; UnknownReference (on ``field``) otherwise."""
    try:
        entry = all_of(store, type_name).get(code)
    except errors.InvalidRequest:
        entry = None
    if entry is None or not entry.get("active", True):
        raise UnknownReference(f"Unknown {type_name.lower()} {code!r}; choose one from the list.",
                               field=field)
    return entry


def choices(store: DocumentStore, type_name: str) -> list[tuple[str, str]]:
    """(code, name) of the entries that may be chosen now, by name."""
    return sorted(((code, e["name"]) for code, e in all_of(store, type_name).items()
                   if e.get("active", True)), key=lambda c: c[1])


def dose_unit_choices(store: DocumentStore) -> list[tuple[str, str]]:
    """(code, name) of the units a dose may be given in (not lab units such as g/L)."""
    units = all_of(store, "Unit")
    return [(code, name) for code, name in choices(store, "Unit")
            if units[code].get("dimension") in DOSE_DIMENSIONS]


def active(store: DocumentStore, type_name: str) -> list[dict[str, Any]]:
    """The entries that may be chosen now, by code (from the cache)."""
    return [e for _, e in sorted(all_of(store, type_name).items()) if e.get("active", True)]


def codes(store: DocumentStore, type_names: Sequence[str]) -> dict[str, set[str]]:
    """Every code of each type, retired ones included (from the cache)."""
    return {t: set(all_of(store, t)) for t in type_names}


def entry(store: DocumentStore, type_name: str, code: str) -> tuple[dict[str, Any], str] | None:
    """One entry as stored now and its version (a point read past the cache), or None."""
    try:
        doc = store.read(keys.reference(type_name), code)
    except (errors.NotFound, errors.InvalidRequest):
        return None
    return dict(doc["docContents"]), doc["_etag"]


def saved_versions(store: DocumentStore, type_name: str) -> list[dict[str, Any]]:
    """Every save of the type's entries, oldest first, from the type's stream (one query of
    its partition): ``{code, at, entry, previous}`` (``previous`` None when added; ``at``
    an ISO instant)."""
    docs = store.query_all(keys.reference(type_name), Query(
        where=(Cond("docType", "=", EVENT_DOC_TYPE),), order_by=(("id", "ASC"),)))
    out = []
    for doc in docs:
        c = doc["docContents"]
        data = c.get("data") or {}
        if data.get("code") and isinstance(data.get("entry"), dict):
            out.append({"code": data["code"], "at": c.get("occurredAt") or "",
                        "entry": data["entry"], "previous": data.get("previous")})
    return out


def invalidate() -> None:
    """Forget this process's copies (after an edit here, or a test's direct writes)."""
    _copies.clear()


# ------------------------------------------------------------------ edits
class ReferenceEntries:
    """Loads one entry and saves it with its events as one batch in its type's partition."""

    def __init__(self, uow: UnitOfWork) -> None:
        self.uow = uow
        self._etags: dict[tuple[str, str], str] = {}

    def load(self, type_name: str, code: str) -> dict[str, Any] | None:
        """The stored entry (one point read), or None."""
        try:
            doc = self.uow.get(keys.reference(type_name), code)
        except (errors.NotFound, errors.InvalidRequest):
            return None
        self._etags[(type_name, code)] = doc["_etag"]
        return dict(doc["docContents"])

    def version(self, type_name: str, code: str) -> str | None:
        return self._etags.get((type_name, code))

    def expect(self, type_name: str, code: str, version: str | None) -> None:
        if version and version != self.version(type_name, code):
            raise StaleWrite(keys.reference(type_name), code)

    def save(self, type_name: str, entry: dict[str, Any], events: Sequence[Event], *,
             actor: Actor, now: datetime) -> None:
        """Create or replace the entry (StaleWrite if it changed or appeared meanwhile)."""
        pk = keys.reference(type_name)
        doc = wrap(doc_id=entry["code"], pk=pk, doc_type=REFERENCE, sub_type=type_name,
                   contents=entry)
        if (type_name, entry["code"]) in self._etags:
            self.uow.update(doc)
        else:
            self.uow.add(doc)
        append_events(self.uow, pk, [(e.event_type, e.payload()) for e in events],
                      actor=actor.as_dict(), now=now)
        written = self.uow.commit()
        self._etags.update({(type_name, d["id"]): d["_etag"] for d in written
                            if d["docType"] == REFERENCE})
        invalidate()


