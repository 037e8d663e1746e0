"""Possible duplicates: an exact index of patients by who they are, for registration.

One partition per identity key (folded family name, folded given name, birth date —
:func:`patients.domain.records.identity_key`), ``M_PERSON_<hash>``, holds one document,
``people``, listing the patients registered under that key. Registration writes it first,
after the MRN holder and the same way (reserve-then-commit with compensation, :mod:`.mrn`):

* no one under the key: the document is *created* naming the new patient — the create is
  the check, so a registration without a duplicate pays one write and no read;
* someone already there: the create conflicts, the document is read and its patients are
  the candidates (:class:`~patients.domain.errors.PossibleDuplicate`), unless the clerk said
  this is not the same person; then the new patient is appended under the document's etag.

The patient batch failing gives the entry back (:func:`release`). A crash in between leaves
an entry whose patient never came to be: it names no candidate once it is older than
``IN_FLIGHT_SECONDS``, and the next write under the key drops it. A corrected name or birth
date moves the patient to its new key after the correction committed (:func:`move`): the
index only warns, so a move that fails leaves a warning less, never a wrong record.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core import keys
from patients.domain.errors import PossibleDuplicate
from patients.domain.records import Patient, identity_key
from patients.persistence.documents import PATIENT_ID, patient_from_doc
from patients.persistence.queries import patient_documents

logger = logging.getLogger(__name__)
DOC_ID = "people"
DOC_TYPE = "PersonIndex"
IN_FLIGHT_SECONDS = 60  # as for the MRN holder: an entry without its patient yet
ATTEMPTS = 5  # concurrent registrations under one key retry their append


@dataclass(frozen=True)
class Hold:
    """This patient's entry under ``key``: what :func:`release` takes back."""

    key: str
    patient_id: str


def partition(key: str) -> str:
    """The key's partition; hashed, as a folded name may hold any character."""
    return keys.unique("PERSON", hashlib.sha256(key.encode()).hexdigest()[:40])


def key_of(patient: Patient) -> str:
    return identity_key(patient.family_name, patient.given_name, patient.birth_date)


def _entry(patient: Patient) -> dict[str, Any]:
    return {
        "patientId": patient.patient_id,
        "mrn": patient.mrn,
        "familyName": patient.family_name,
        "givenName": patient.given_name,
        "birthDate": patient.birth_date.isoformat(),
        "at": time.time(),
    }


def _first(key: str, patient: Patient) -> Document:
    """The key's document, naming ``patient`` alone (created: the create is the check)."""
    return wrap(doc_id=DOC_ID, pk=partition(key), doc_type=DOC_TYPE,
                contents={"key": key, "people": [_entry(patient)]})


def _body(doc: Document, people: list[dict[str, Any]]) -> Document:
    body = {k: v for k, v in doc.items() if not k.startswith("_")}
    body["docContents"] = {**doc["docContents"], "people": people}
    return body


def _candidates(
    store: DocumentStore, people: list[dict[str, Any]]
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """The entries that name a patient (as stored now) or one still being registered, and
    the entries to keep. One point read per entry: only on the duplicate path."""
    found, kept = [], []
    for entry in people:
        doc = store.try_read(keys.patient(entry["patientId"]), PATIENT_ID)
        if doc is not None:
            c = doc["docContents"]
            found.append(
                {
                    "id": c["patientId"],
                    "mrn": c["mrn"],
                    "name": f"{c['familyName'].upper()}, {c['givenName']}",
                    "birth_date": c["birthDate"],
                }
            )
        elif time.time() - entry.get("at", 0) < IN_FLIGHT_SECONDS:
            found.append(
                {
                    "id": entry["patientId"],
                    "mrn": "",  # no chart to open yet
                    "name": f"{entry['familyName'].upper()}, {entry['givenName']}",
                    "birth_date": entry["birthDate"],
                }
            )
        else:
            continue  # left by a registration that never committed: dropped on this write
        kept.append(entry)
    return found, kept


def hold(store: DocumentStore, patient: Patient, *, confirmed: bool) -> Hold:
    """Enter ``patient`` under its identity key, or raise PossibleDuplicate naming the
    patients already there unless ``confirmed`` (the clerk said: not the same person)."""
    key = key_of(patient)
    pk = partition(key)
    new = _first(key, patient)
    for _ in range(ATTEMPTS):
        try:
            store.create(new)
            return Hold(key, patient.patient_id)
        except errors.Conflict:
            pass
        current = store.try_read(pk, DOC_ID)
        if current is None:
            continue  # released meanwhile: create again
        found, kept = _candidates(store, current["docContents"].get("people", []))
        if found and not confirmed:
            raise PossibleDuplicate(found)
        try:
            store.replace(_body(current, [*kept, _entry(patient)]), if_match=current["_etag"])
            return Hold(key, patient.patient_id)
        except (errors.PreconditionFailed, errors.NotFound):
            continue  # another registration under this key wrote first: look again
    raise errors.Unavailable("could not check for a duplicate patient; retry")


def release(store: DocumentStore, held: Hold) -> None:
    """Take the entry back (compensation, or a move away). Best effort: an entry left
    behind names no candidate once its patient is found missing and the entry is old."""
    pk = partition(held.key)
    for _ in range(ATTEMPTS):
        current = store.try_read(pk, DOC_ID)
        if current is None:
            return
        people = current["docContents"].get("people", [])
        rest = [e for e in people if e["patientId"] != held.patient_id]
        if len(rest) == len(people):
            return
        try:
            if rest:
                store.replace(_body(current, rest), if_match=current["_etag"])
            else:
                store.delete(pk, DOC_ID, if_match=current["_etag"])
            return
        except (errors.PreconditionFailed, errors.NotFound):
            continue


def move(store: DocumentStore, before: str, patient: Patient) -> None:
    """After a committed correction changed who ``patient`` is (``before``: the old key),
    enter them under the new key (never refused: the record is already saved)."""
    if before == key_of(patient):
        return
    try:
        hold(store, patient, confirmed=True)
        release(store, Hold(before, patient.patient_id))
    except errors.StoreError:
        # The correction is committed; failing it now would only mislead the user.
        logger.warning("identity index not moved after a correction; it may warn less")


def ensure(store: DocumentStore, patient: Patient) -> bool:
    """Enter ``patient`` under its identity key unless it is there already (never refused:
    the record exists). True when this wrote the entry."""
    key = key_of(patient)
    pk = partition(key)
    for _ in range(ATTEMPTS):
        current = store.try_read(pk, DOC_ID)
        if current is None:
            try:
                store.create(_first(key, patient))
                return True
            except errors.Conflict:
                continue  # a registration under this key came first: look again
        people = current["docContents"].get("people", [])
        if any(e["patientId"] == patient.patient_id for e in people):
            return False
        try:
            store.replace(_body(current, [*people, _entry(patient)]), if_match=current["_etag"])
            return True
        except (errors.PreconditionFailed, errors.NotFound):
            continue
    raise errors.Unavailable("could not enter a patient in the identity index; retry")


@dataclass(frozen=True)
class Backfilled:
    patients: int  # registered patients found
    entered: int  # of them, entries this wrote (the rest were in the index already)


def backfill(store: DocumentStore, progress: Callable[[int], None] = lambda n: None
             ) -> Backfilled:
    """Enter every registered patient in the index: for records made before it existed (an
    upgraded or restored store) or left out by a correction whose move failed; safe to run
    again, and while clerks register."""
    seen = entered = 0
    for doc in patient_documents(store):
        seen += 1
        entered += ensure(store, patient_from_doc(doc))
        progress(1)
    return Backfilled(seen, entered)
