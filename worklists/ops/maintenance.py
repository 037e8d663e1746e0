"""Rebuild and check the views from the source records (the patients' partitions).

Patients are enumerated by scanning the change feed from the beginning (the one way to list
every partition on Cosmos without a cross-partition query); each patient is then rebuilt
or checked with single-partition reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field

from cosmos_backend import errors, keys
from cosmos_backend.store import DocumentStore
from worklists.delivery.projector import (
    build_patients,
    read_source,
    read_tracker,
    rebuild_patient,
    row_document,
)
from worklists.projection.rows import rows_for
from worklists.projection.schema import tracker_id, tracker_pk, view_pk
from worklists.read import generations

Progress = Callable[[int], None]
_VOLATILE = ("seq", "projectedAt")
# Patients per bulk build step: enough that a view partition's rows fill batches, small
# enough that progress moves and memory stays flat.
BUILD_CHUNK = 500


def patient_ids(store: DocumentStore) -> Iterator[str]:
    for feed_range in store.feed_ranges():
        token = None
        while True:
            page = store.read_feed(feed_range, continuation=token, max_items=1000)
            for doc in page.items:
                if doc.get("docType") == "Patient" and doc["partitionKey"].startswith(keys.PATIENT):
                    yield keys.suffix(doc["partitionKey"])
            if not page.items:
                break
            token = page.continuation


def rebuild(store: DocumentStore, ids: list[str], progress: Progress = lambda n: None,
            *, keep_old: bool = False) -> tuple[int, int]:
    """Build a new generation beside the live one, switch to it; returns (new, retired)."""
    gen = generations.start_building(store)
    try:
        for start in range(0, len(ids), BUILD_CHUNK):
            chunk = ids[start:start + BUILD_CHUNK]
            build_patients(store, gen, chunk)
            progress(len(chunk))
    except BaseException:
        generations.abandon(store, gen)
        raise
    old = generations.switch(store, gen)
    if not keep_old:
        for patient_id in ids:
            drop_generation(store, old, patient_id)
    return gen, old


def drop_generation(store: DocumentStore, gen: int, patient_id: str) -> None:
    _, owned, tracker = read_tracker(store, patient_id, gen)
    for view, bucket, row_id in owned:
        with suppress(errors.NotFound):
            store.delete(view_pk(view, gen, bucket), row_id)
    if tracker is not None:
        with suppress(errors.NotFound):
            store.delete(tracker_pk(patient_id), tracker_id(gen))


@dataclass
class Report:
    patients: int = 0
    behind: list[str] = field(default_factory=list)  # tracker older than the source
    drifted: dict[str, list[str]] = field(default_factory=dict)  # patient → problems
    repaired: int = 0


def check(store: DocumentStore, ids: list[str], *, repair: bool = False,
          progress: Progress = lambda n: None) -> Report:
    """Compare each patient's rows in the active generation with its source record."""
    gen = generations.pointer(store)[0]["active"]
    report = Report()
    for patient_id in ids:
        report.patients += 1
        problems = check_patient(store, gen, patient_id)
        state, _, _ = read_tracker(store, patient_id, gen)
        source_seq = read_source(store, patient_id).seq
        if state.seq < source_seq:
            report.behind.append(patient_id)
        if problems:
            report.drifted[patient_id] = problems
        if repair and (problems or state.seq < source_seq):
            rebuild_patient(store, gen, patient_id, repair=True)
            report.repaired += 1
        progress(1)
    return report


def check_patient(store: DocumentStore, gen: int, patient_id: str) -> list[str]:
    source = read_source(store, patient_id)
    expected = rows_for(source)
    problems = []
    for key, row in expected.items():
        want = row_document(row, gen, source.seq)
        got = store.try_read(want["partitionKey"], want["id"])
        if got is None:
            problems.append(f"missing {key[0]} row")
            continue
        strip = {k: v for k, v in got["docContents"].items() if k not in _VOLATILE}
        wanted = {k: v for k, v in want["docContents"].items() if k not in _VOLATILE}
        query_ok = all(got.get(k) == v for k, v in row.query.items())
        if strip != wanted or not query_ok:
            problems.append(f"stale {key[0]} row")
    _, owned, _ = read_tracker(store, patient_id, gen)
    for key in owned:
        if key not in expected and store.try_read(view_pk(key[0], gen, key[1]), key[2]):
            problems.append(f"extra {key[0]} row")
    return problems
