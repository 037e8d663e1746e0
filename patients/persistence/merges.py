"""The documents of a merge (docs/patients.md, "Merging duplicate records").

* The **saga** document (``Merge``, id ``merge-<mergeId>``) lives in the *retired* record's
  partition: it is created in the same batch that locks that record, so a merge exists if
  and only if its record is locked, and everything that meets the locked record finds the
  saga beside it. It says where the merge stands (``state``) and which documents it moves.
* The **receipt** (``MergeReceipt``, id ``merged-<mergeId>``) lives in the *survivor's*
  partition, written in each batch that copies a part of the history: how many parts are
  done and the ids of every copy, so a step is never applied twice and an undo knows what
  to take back.

Copies are the retired documents re-keyed to the survivor's partition (``patientId`` the
survivor's, ``mergedFrom`` naming the merge, the retired record and its MRN); admissions and
orders keep their ids (UUIDs), so the worklists, the MAR and the bed hold follow them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, Document, DocumentStore, Query, iter_feed
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from patients.persistence.documents import ADMISSION, ORDER
from patients.persistence.handovers import HANDOVER
from patients.persistence.observations import OBSERVATION, SUMMARY, SUMMARY_ID

SAGA, RECEIPT = "Merge", "MergeReceipt"
# What a merge moves, by document type → the kind its events list it under.
MOVED_KINDS = {ADMISSION: "admissions", ORDER: "orders", OBSERVATION: "observations",
               HANDOVER: "handovers"}
PART_SIZE = 40  # copies per batch: with the patient, summary, receipt, stream and event


def saga_id(merge_id: str) -> str:
    return f"merge-{merge_id}"


def receipt_id(merge_id: str) -> str:
    return f"merged-{merge_id}"


def new_saga(retired_id: str, saga: dict[str, Any]) -> Document:
    return wrap(doc_id=saga_id(saga["mergeId"]), pk=keys.patient(retired_id), doc_type=SAGA,
                contents=saga)


def load_saga(uow: UnitOfWork, retired_id: str, merge_id: str) -> dict[str, Any] | None:
    """The saga through ``uow`` (tracked: a step's batch replaces this very version)."""
    doc = uow.try_get(keys.patient(retired_id), saga_id(merge_id))
    return None if doc is None else dict(doc["docContents"])


def stage_saga(uow: UnitOfWork, retired_id: str, saga: dict[str, Any]) -> None:
    uow.update(new_saga(retired_id, saga))


def receipts(store: DocumentStore, patient_id: str) -> list[dict[str, Any]]:
    """The merge receipts on ``patient_id``'s record (one per merge into it), one query."""
    return [dict(d["docContents"]) for d in store.query_all(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", RECEIPT),)))]


def load_receipt(uow: UnitOfWork, survivor_id: str, merge_id: str) -> dict[str, Any] | None:
    doc = uow.try_get(keys.patient(survivor_id), receipt_id(merge_id))
    return None if doc is None else dict(doc["docContents"])


def stage_receipt(uow: UnitOfWork, survivor_id: str, receipt: dict[str, Any], *,
                  exists: bool) -> None:
    doc = wrap(doc_id=receipt_id(receipt["mergeId"]), pk=keys.patient(survivor_id),
               doc_type=RECEIPT, contents=receipt)
    (uow.update if exists else uow.add)(doc)


def history_ids(store: DocumentStore, patient_id: str) -> list[str]:
    """The ids of the record's documents a merge moves (stays, orders, observation sets,
    handover notes), in id order (one query)."""
    docs = store.query_all(keys.patient(patient_id), Query(
        where=(Cond("docType", "in", list(MOVED_KINDS)),)), page_size=1000)
    return sorted(d["id"] for d in docs)


def parts_of(ids: list[str], size: int | None = None) -> list[list[str]]:
    """``ids`` in parts of ``size`` (a saga keeps the size it started with, so a process
    resuming it cuts the very same parts)."""
    size = size or PART_SIZE
    return [ids[i:i + size] for i in range(0, len(ids), size)] or [[]]


def read_many(uow: UnitOfWork, patient_id: str, ids: list[str]) -> list[Document]:
    """The documents ``ids`` of the record that still exist, through ``uow`` (one query)."""
    if not ids:
        return []
    return uow.query_all(keys.patient(patient_id), Query(where=(Cond("id", "in", ids),)))


def rekeyed(doc: Document, patient_id: str, merged_from: dict[str, Any] | None) -> Document:
    """``doc`` as a document of ``patient_id``'s record: its ``patientId`` theirs,
    ``mergedFrom`` set (a copy into the survivor) or dropped (``None``: a copy going back);
    the ``open`` mark kept (an active stay stays in the open record)."""
    contents = dict(doc["docContents"])
    if "patientId" in contents:
        contents["patientId"] = patient_id
    contents.pop("mergedFrom", None)
    if merged_from is not None:
        contents["mergedFrom"] = merged_from
    fresh = wrap(doc_id=doc["id"], pk=keys.patient(patient_id), doc_type=doc["docType"],
                 sub_type=doc.get("docSubType"), contents=contents)
    for key, value in doc.items():  # top-level marks (``open``), not the system's
        if key not in fresh and not key.startswith("_"):
            fresh[key] = value
    return fresh


def kind_of(doc: Document) -> str:
    return MOVED_KINDS[doc["docType"]]


def load_summary_doc(uow: UnitOfWork, patient_id: str) -> Document | None:
    doc = uow.try_get(keys.patient(patient_id), SUMMARY_ID)
    return doc if doc is not None and doc["docType"] == SUMMARY else None


def stage_summary(uow: UnitOfWork, patient_id: str, summary: dict[str, Any], *,
                  exists: bool) -> None:
    doc = wrap(doc_id=SUMMARY_ID, pk=keys.patient(patient_id), doc_type=SUMMARY,
               contents=summary)
    (uow.update if exists else uow.add)(doc)


def all_sagas(store: DocumentStore) -> Iterator[dict[str, Any]]:
    """Every merge's saga (its latest version), by scanning the change feed: the one way to
    list documents over every patient partition without a cross-partition query. For the
    operators' commands (``manage.py merges``, ``check_worklists``), not for pages."""
    for feed_range in store.feed_ranges():
        for page in iter_feed(store, feed_range, max_items=1000):
            for doc in page.items:
                if (doc.get("docType") == SAGA
                        and str(doc.get("partitionKey", "")).startswith(keys.PATIENT)):
                    yield dict(doc["docContents"])


def read_saga(store: DocumentStore, survivor: dict[str, Any], merge_id: str) -> dict[str, Any]:
    """The saga of merge ``merge_id`` into the survivor (``survivor``: its view), found
    through the survivor's receipt (two point reads)."""
    receipt = store.read(keys.patient(survivor["patientId"]), receipt_id(merge_id))
    doc = store.read(keys.patient(receipt["docContents"]["retiredId"]), saga_id(merge_id))
    return dict(doc["docContents"])


Moved = dict[str, list[str]]  # kind → document ids


def _moved() -> Moved:
    return {kind: [] for kind in MOVED_KINDS.values()}


def copy_part(uow: UnitOfWork, saga: dict[str, Any], ids: list[str]) -> Moved:
    """Register in ``uow`` the survivor's copies of the retired documents ``ids`` (a note
    of the same shift, or a set of the same instant, the survivor already has is left
    apart on the retired record); returns what was copied."""
    source = {"mergeId": saga["mergeId"], "patientId": saga["retiredId"],
              "mrn": saga["retiredMrn"]}
    copied = _moved()
    for doc in read_many(uow, saga["retiredId"], ids):
        if uow.try_get(keys.patient(saga["survivorId"]), doc["id"]) is not None:
            continue
        uow.add(rekeyed(doc, saga["survivorId"], source))
        copied[kind_of(doc)].append(doc["id"])
    return copied


def return_part(uow: UnitOfWork, saga: dict[str, Any], ids: list[str],
                returned: dict[str, str]) -> Moved:
    """Register in ``uow`` the survivor's copies ``ids`` as they are now, back as the
    retired record's documents; ``returned`` gains each copy's version (what the take-back
    may delete). Returns what went back."""
    back = _moved()
    for copy in read_many(uow, saga["survivorId"], ids):
        doc = rekeyed(copy, saga["retiredId"], None)
        if uow.try_get(doc["partitionKey"], doc["id"]) is None:
            uow.add(doc)
        else:
            uow.update(doc)
        returned[copy["id"]] = copy["_etag"]
        back[kind_of(copy)].append(copy["id"])
    return back


def take_back_part(uow: UnitOfWork, saga: dict[str, Any], ids: list[str],
                   returned: dict[str, str]) -> Moved | None:
    """Register in ``uow`` the deletion of the survivor's copies ``ids``, each at the
    version returned; None (nothing registered) if one changed since it was returned."""
    copies = read_many(uow, saga["survivorId"], ids)
    if any(c["_etag"] != returned.get(c["id"]) for c in copies):
        return None
    taken = _moved()
    for copy in copies:
        uow.delete(copy)
        taken[kind_of(copy)].append(copy["id"])
    return taken


def merge_summary(uow: UnitOfWork, saga: dict[str, Any]) -> dict[str, Any] | None:
    """The survivor takes the retired record's observations' summary when it has none or an
    older one (keeping its own SpO2 scale decision); returns the summary it had (to give it
    back on an undo), ``{"none": True}`` when it had none, or None when it kept its own."""
    theirs = load_summary_doc(uow, saga["retiredId"])
    mine = load_summary_doc(uow, saga["survivorId"])
    if theirs is None:
        return None
    t, m = theirs["docContents"], (mine or {}).get("docContents") or {}
    if mine is not None and str(m.get("lastTakenAt") or "") >= str(t.get("lastTakenAt") or ""):
        return None
    taken = {**t, "scale2": m.get("scale2") or t.get("scale2"), "mergeId": saga["mergeId"]}
    stage_summary(uow, saga["survivorId"], taken, exists=mine is not None)
    return dict(m) if mine is not None else {"none": True}


def give_back_summary(uow: UnitOfWork, saga: dict[str, Any], before: Any) -> None:
    """The survivor's summary as it was before the merge, unless a set recorded on the
    survivor since made it its own."""
    if before is None:
        return
    mine = load_summary_doc(uow, saga["survivorId"])
    if mine is None or mine["docContents"].get("mergeId") != saga["mergeId"]:
        return
    if before.get("none"):
        uow.delete(mine)
    else:
        stage_summary(uow, saga["survivorId"], before, exists=True)
