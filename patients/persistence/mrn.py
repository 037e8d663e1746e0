"""MRN uniqueness across partitions: hold ``M_MRN_<mrn>``, then commit the patient.

The holding document is the explicit second-partition write of registration
(reserve-then-commit with compensation): it is created naming the new patient (409 → the MRN
is taken) before the patient batch, and deleted again if that batch fails. Nothing else is
written on the way, so registering costs two round trips. A crash between the two steps
leaves a holder whose patient never came to be: once it is older than
``IN_FLIGHT_SECONDS`` the next registration of that MRN takes it over, under its etag.

Generated MRNs come from a shared counter, taken ``BLOCK`` numbers at a time per process, so
the counter costs one write per ``BLOCK`` registrations (numbers of a block a process never
used are skipped: MRNs are unique, not gapless).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from django.conf import settings

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core import keys
from patients.domain.errors import DuplicateMrn, MrnBeingRegistered
from patients.persistence.documents import PATIENT_ID

RESERVATION_ID = "mrn"
IN_FLIGHT_SECONDS = 60  # how long an uncommitted registration is presumed still in flight
COUNTER_PK = keys.unique("MRN", "counter")
BLOCK = 100


@dataclass(frozen=True)
class Hold:
    """A held MRN, and what gives it back (:func:`release`)."""

    mrn: str
    doc: Document


def reservation_pk(mrn: str) -> str:
    return keys.unique("MRN", mrn)


def lookup(store: DocumentStore, mrn: str) -> str | None:
    """The patient id holding ``mrn`` (one point read), or None. A holder left by a crashed
    registration names a patient that does not exist: readers of that patient get None."""
    try:
        doc = store.read(reservation_pk(mrn), RESERVATION_ID)
    except (errors.NotFound, errors.InvalidRequest):
        return None
    return doc["docContents"]["patientId"]


def reserve(store: DocumentStore, mrn: str, patient_id: str) -> Hold:
    """Hold ``mrn`` for ``patient_id`` (about to be committed); DuplicateMrn if taken."""
    doc = wrap(doc_id=RESERVATION_ID, pk=reservation_pk(mrn), doc_type="MrnReservation",
               contents={"mrn": mrn, "patientId": patient_id, "state": "confirmed"})
    try:
        return Hold(mrn, store.create(doc))
    except errors.Conflict:
        current = store.read(doc["partitionKey"], RESERVATION_ID)
    holder = current["docContents"]["patientId"]
    if store.try_read(keys.patient(holder), PATIENT_ID) is not None:
        raise DuplicateMrn(f"MRN {mrn} is already registered to another patient.")
    if time.time() - current["_ts"] < IN_FLIGHT_SECONDS:
        raise MrnBeingRegistered(
            f"MRN {mrn} is being registered right now; look the patient up by MRN in a moment.")
    try:  # a registration that crashed long ago: the MRN is free
        return Hold(mrn, store.replace(doc, if_match=current["_etag"]))
    except errors.PreconditionFailed:
        raise MrnBeingRegistered(
            f"MRN {mrn} is being registered right now; look the patient up by MRN in a moment."
        ) from None


def release(store: DocumentStore, hold: Hold) -> None:
    """Compensation: the patient batch failed, so the MRN is free again."""
    try:
        store.delete(hold.doc["partitionKey"], RESERVATION_ID, if_match=hold.doc["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass


class _Numbers:
    """This process's block of counter values: ``next`` hands them out one by one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = self._end = 0
        self._counter: Document | None = None  # the counter as last seen: etag for the CAS

    def next(self, store: DocumentStore) -> int:
        with self._lock:
            if self._next >= self._end:
                self._next, self._end = self._take_block(store)
            self._next += 1
            return self._next

    def _take_block(self, store: DocumentStore) -> tuple[int, int]:
        for _ in range(50):
            doc = self._counter or store.try_read(COUNTER_PK, "counter")
            if doc is None:
                try:
                    doc = store.create(wrap(doc_id="counter", pk=COUNTER_PK,
                                            doc_type="Counter", contents={"n": 0}))
                except errors.Conflict:
                    continue
            start = doc["docContents"]["n"]
            updated = {k: v for k, v in doc.items() if not k.startswith("_")}
            updated["docContents"] = {"n": start + BLOCK}
            try:
                self._counter = store.replace(updated, if_match=doc["_etag"])
            except (errors.PreconditionFailed, errors.NotFound):
                self._counter = None  # another process took a block: read it again
                continue
            return start, start + BLOCK
        raise errors.Unavailable("could not allocate an MRN; retry")


_numbers: dict[tuple[int, int], _Numbers] = {}


def next_mrn(store: DocumentStore) -> str:
    """A new MRN in ``MRN_FORMAT`` from this process's block of the shared counter."""
    # Keyed by process too: a forked worker must not hand out its parent's block.
    numbers = _numbers.setdefault((os.getpid(), id(store)), _Numbers())
    return settings.MRN_FORMAT.format(n=numbers.next(store))
