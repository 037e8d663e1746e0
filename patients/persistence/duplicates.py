"""Likely duplicate registrations, found as patients are registered or corrected, listed
without reading every record.

Two small indexes, neither on a command's path (the relay's follow-up fills them, see
:mod:`patients.tasks`, and ``manage.py index_identities`` enters older records):

* **births** — one partition per birth date and sex (``M_BORN_<date>.<sex>``) holding one
  document, ``people``, that names the patients born that day of that sex. A patient
  entering it is compared with the others there (:func:`patients.domain.duplicates.match`),
  so finding a pair costs one read and one write per registration, whatever the size of the
  hospital; a corrected birth date or sex moves the patient to the new day.
* **pairs** — one partition, ``M_DUPLICATES_pairs``, one document per likely pair
  (``pair-<first>.<second>``), listed (``docSubType`` ``DuplicatePairOpen``) until records
  staff decide: "not the same person" (:func:`not_the_same`) or a merge. The list is one
  query of that partition, paged by the store; each pair's patients are read by id and
  compared again, so a pair no longer alike (a name corrected since) or with a merged
  patient is left out.

The rule also pairs two records with the same national identifier, but the record holds none
yet: once it does, finding those pairs needs an index keyed by the identifier (as
``M_PERSON_`` is by the identity key), since they may differ in birth date and sex.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.outbox import append_events
from cosmos_backend.store import MAX_BATCH_OPERATIONS, BatchOp, Cond, Document, DocumentStore, Query
from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import Actor
from patients.domain.duplicates import PairNotListed, Person, match, pair_id
from patients.domain.events import NotSamePerson
from patients.persistence.documents import PATIENT_ID
from patients.persistence.queries import patient_documents

PAIRS = keys.unique("DUPLICATES", "pairs")
PEOPLE = "people"
PAIR, OPEN, DECIDED = "DuplicatePair", "DuplicatePairOpen", "DuplicatePairDecided"
COMPOSITE_INDEXES = [[{"path": "/docSubType", "order": "ascending"},
                      {"path": "/id", "order": "ascending"}]]
ATTEMPTS = 5


@dataclass(frozen=True)
class Listed:
    """One listed pair: both patients as stored (``first``, ``second``) and why."""

    pair_id: str
    first: dict[str, Any]
    second: dict[str, Any]
    reasons: tuple[str, ...]


def births(birth_date: str, sex: str) -> str:
    return keys.unique("BORN", f"{birth_date}.{sex}")


def pair_doc_id(first: str, second: str) -> str:
    return f"pair-{pair_id(first, second)}"


def person(c: dict[str, Any]) -> Person:
    """The comparison's view of a stored patient (its ``docContents``)."""
    return Person(c["patientId"], c["familyName"], c["givenName"],
                  date.fromisoformat(c["birthDate"]), c.get("sex", "unknown"),
                  c.get("nationalId") or None)


def _entry(c: dict[str, Any]) -> dict[str, Any]:
    return {"patientId": c["patientId"], "familyName": c["familyName"],
            "givenName": c["givenName"], "nationalId": c.get("nationalId") or None}


def _entered(store: DocumentStore, c: dict[str, Any]) -> list[dict[str, Any]]:
    """Enter the patient under their birth date and sex; the others there (as entered)."""
    pk = births(c["birthDate"], c.get("sex", "unknown"))
    for _ in range(ATTEMPTS):
        current = store.try_read(pk, PEOPLE)
        if current is None:
            try:
                store.create(wrap(doc_id=PEOPLE, pk=pk, doc_type="BirthIndex",
                                  contents={"people": [_entry(c)]}))
                return []
            except errors.Conflict:
                continue
        people = current["docContents"]["people"]
        others = [e for e in people if e["patientId"] != c["patientId"]]
        mine = [e for e in people if e["patientId"] == c["patientId"]]
        if mine != [_entry(c)]:
            body = {k: v for k, v in current.items() if not k.startswith("_")}
            body["docContents"] = {**current["docContents"], "people": [*others, _entry(c)]}
            try:
                store.replace(body, if_match=current["_etag"])
            except (errors.PreconditionFailed, errors.NotFound):
                continue
        return others
    raise errors.Unavailable("could not enter a patient in the births index; retry")


def _left(store: DocumentStore, birth_date: str, sex: str, patient_id: str) -> None:
    pk = births(birth_date, sex)
    for _ in range(ATTEMPTS):
        current = store.try_read(pk, PEOPLE)
        people = [] if current is None else current["docContents"]["people"]
        rest = [e for e in people if e["patientId"] != patient_id]
        if current is None or len(rest) == len(people):
            return
        body = {k: v for k, v in current.items() if not k.startswith("_")}
        body["docContents"] = {**current["docContents"], "people": rest}
        try:
            store.replace(body, if_match=current["_etag"])
            return
        except (errors.PreconditionFailed, errors.NotFound):
            continue


def enter(store: DocumentStore, patient_id: str, *, before: dict[str, Any] | None = None,
          now: datetime | None = None) -> int:
    """Enter a registered (or corrected: ``before`` holds the old ``birthDate``/``sex``)
    patient in the births index and note each likely pair it makes. Idempotent; returns the
    pairs noted now. A pair already noted, listed or decided, stays as it is."""
    doc = store.try_read(keys.patient(patient_id), PATIENT_ID)
    if doc is None:
        return 0
    c = doc["docContents"]
    old = {"birthDate": c["birthDate"], "sex": c.get("sex", "unknown"), **(before or {})}
    if (old["birthDate"], old["sex"]) != (c["birthDate"], c.get("sex", "unknown")):
        _left(store, old["birthDate"], old["sex"], patient_id)
    if c.get("mergedInto"):
        return 0
    me = person(c)
    found = []
    for other in _entered(store, c):
        them = Person(other["patientId"], other["familyName"], other["givenName"],
                      me.birth_date, me.sex, other.get("nationalId"))
        if match(me, them):
            found.append(tuple(sorted((me.patient_id, them.patient_id))))
    return _note(store, found, (now or datetime.now(UTC)).isoformat())


def _note(store: DocumentStore, found: list[tuple[str, ...]], at: str) -> int:
    """Note the pairs not noted yet: one query of the pairs partition for those already
    there, then the new ones in transactional batches (a hundred at most each), not a write
    apiece: a patient registered under a placeholder name and birth date (a major
    incident's unidentified patients) is alike to every earlier one. A batch that meets a
    pair noted meanwhile (another follow-up of the same patients) is noted one by one."""
    noted = 0
    for start in range(0, len(found), MAX_BATCH_OPERATIONS):
        chunk = {pair_doc_id(first, second): (first, second)
                 for first, second in found[start:start + MAX_BATCH_OPERATIONS]}
        there = {d["id"] for d in store.query_all(
            PAIRS, Query(where=(Cond("id", "in", sorted(chunk)),)))}
        docs = [wrap(doc_id=doc_id, pk=PAIRS, doc_type=PAIR, sub_type=OPEN, contents={
                    "pairId": pair_id(first, second), "first": first, "second": second,
                    "foundAt": at})
                for doc_id, (first, second) in chunk.items() if doc_id not in there]
        if not docs:
            continue
        try:
            store.execute_batch(PAIRS, [BatchOp.create(d) for d in docs])
            noted += len(docs)
        except errors.BatchFailed as failed:
            if not isinstance(failed.cause, errors.Conflict):
                raise
            for d in docs:
                try:
                    store.create(d)
                    noted += 1
                except errors.Conflict:
                    pass
    return noted


def _patient(store: DocumentStore, patient_id: str) -> dict[str, Any] | None:
    doc = store.try_read(keys.patient(patient_id), PATIENT_ID)
    return None if doc is None else {**doc["docContents"], "etag": doc["_etag"]}


def listed(store: DocumentStore, pair: Document) -> Listed | None:
    """The pair as it stands now; None when it is no longer one (merged, or not alike)."""
    c = pair["docContents"]
    first, second = _patient(store, c["first"]), _patient(store, c["second"])
    if first is None or second is None or first.get("mergedInto") or second.get("mergedInto"):
        return None
    reasons = match(person(first), person(second))
    return Listed(c["pairId"], first, second, reasons) if reasons else None


def page(store: DocumentStore, *, page_size: int = 20,
         continuation: str | None = None) -> tuple[list[Listed], str | None]:
    """One page of listed pairs, in a stable order (by pair id), and the next page's
    continuation."""
    result = store.query(PAIRS, Query(where=(Cond("docSubType", "=", OPEN),)),
                         page_size=page_size, continuation=continuation)
    found = [one for one in (listed(store, d) for d in result.items) if one is not None]
    return found, result.continuation


def find(store: DocumentStore, pair: str) -> Listed:
    """A listed pair by id; :class:`PairNotListed` when it is not (or no longer) one."""
    first, _, second = pair.partition(".")
    doc = store.try_read(PAIRS, pair_doc_id(first, second)) if second else None
    found = listed(store, doc) if doc is not None and doc["docSubType"] == OPEN else None
    if found is None:
        raise PairNotListed("These two records are not listed as a possible duplicate "
                            "(any more): someone decided already, or a record changed.")
    return found


def not_the_same(uow: UnitOfWork, pair: str, *, reason: str, actor: Actor,
                 now: datetime) -> None:
    """Mark the pair "not the same person": the pair document (no longer listed) and a
    ``NotSamePerson`` event naming both patients, the reason and the actor, in one batch
    of the pairs partition."""
    found = find(uow.store, pair)
    first, second = found.first, found.second
    doc = uow.get(PAIRS, pair_doc_id(first["patientId"], second["patientId"]))
    if doc["docSubType"] != OPEN:
        raise PairNotListed("Someone decided about these two records meanwhile.")
    doc["docSubType"] = DECIDED
    doc["docContents"] = {**doc["docContents"], "decision": "not-same-person",
                          "decidedAt": now.isoformat(), "decidedBy": actor.id,
                          "reason": reason}
    uow.update(doc)
    event = NotSamePerson(pair_id=found.pair_id,
                          patients=[{"patientId": p["patientId"], "mrn": p["mrn"]}
                                    for p in (first, second)],
                          reasons=list(found.reasons), reason=reason)
    append_events(uow, PAIRS, [(event.event_type, event.payload())], actor=actor.as_dict(),
                  now=now)
    try:
        uow.commit()
    except StaleWrite:
        raise PairNotListed("Someone decided about these two records meanwhile.") from None


def backfill(store: DocumentStore) -> tuple[int, int]:
    """Enter every registered patient in the births index, noting the pairs they make (for
    records made before it existed, or whose follow-up was lost); safe to run again.
    Returns (patients, pairs noted now)."""
    seen = noted = 0
    for doc in patient_documents(store):
        seen += 1
        noted += enter(store, doc["docContents"]["patientId"])
    return seen, noted
