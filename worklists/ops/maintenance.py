"""Rebuild and check the views from the source records (the patients' partitions, and the
wards' for their shift rows).

Patients are enumerated by scanning the change feed from the beginning (the one way to list
every partition on Cosmos without a cross-partition query); each patient is then rebuilt
or checked with single-partition reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field

from cosmos_backend import errors
from cosmos_backend.outbox import stream_head
from cosmos_backend.store import DocumentStore, Query
from hisadmin.core import keys
from worklists.persistence import generations, view_rows, ward_shifts
from worklists.persistence.feed import patient_ids
from worklists.persistence.source import read_source
from worklists.persistence.trackers import (
    bucket_trackers,
    buckets,
    delete_tracker,
    delete_trackers,
    read_legacy_tracker,
    read_tracker,
    saved_since,
)
from worklists.persistence.writer import build_patients, rebuild_patient
from worklists.projection.rows import rows_for
from worklists.projection.state import RowKey

__all__ = ["patient_ids", "rebuild", "drop_generation", "Report", "check", "check_patient",
           "settle_layout"]

Progress = Callable[[int], None]
# Patients per bulk build step: enough that a view partition's rows fill batches, small
# enough that progress moves and memory stays flat.
BUILD_CHUNK = 2000
# The store stamps _ts with its own clock (the Cosmos service's): trackers saved up to this
# long before the listing began are looked at too (a patient listed is skipped anyway).
CLOCK_SLACK_S = 300
DROP_CHUNK = 20_000  # rows of a retired generation deleted together, a batch per partition


def rebuild(store: DocumentStore, ids: list[str], progress: Progress = lambda n: None,
            *, keep_old: bool = False, listed_at: float | None = None) -> tuple[int, int]:
    """Build a new generation beside the live one, switch to it; returns (new, retired).
    ``ids``: every patient, as :func:`patient_ids` listed them from ``listed_at``
    (``time.time()``; default: now).

    It builds at once, while writers still learn of the new generation
    (:func:`~worklists.persistence.generations.begin_building`). A writer that did not
    know yet projects into the active generation only, so once every writer knows:

    - each patient built before then whose stream went on past what was built is built
      again, the careful way (one point read each; none for the patients built after);
    - each patient the list missed (registered after it) whose tracker in the active
      generation was saved since the listing began is built too (one query per tracker
      bucket). Later events of theirs reach the new generation by themselves.
    """
    since = int(time.time() if listed_at is None else listed_at) - CLOCK_SLACK_S
    gen, settled_at, active = generations.begin_building(store)
    early: dict[str, int] = {}  # patient → the sequence built, for those built before
    try:
        for start in range(0, len(ids), BUILD_CHUNK):
            chunk = ids[start:start + BUILD_CHUNK]
            built = build_patients(store, gen, chunk)
            if time.monotonic() < settled_at:
                early.update(built.seqs)
            progress(len(chunk))
        generations.outwait(settled_at)
        for patient_id, seq in early.items():
            if stream_head(store, keys.patient(patient_id)) > seq:
                rebuild_patient(store, gen, patient_id)
        listed = set(ids)
        for patient_id in saved_since(store, active, since):
            if patient_id not in listed:
                rebuild_patient(store, gen, patient_id)
        # The wards' shift rows: built once every writer projects into the new generation
        # too (a later event reaches it by itself), a query and a few rows per ward.
        for ward in ward_shifts.wards(store):
            ward_shifts.rebuild_ward(store, gen, ward)
    except BaseException:
        generations.abandon(store, gen)
        raise
    old = generations.switch(store, gen)
    if not keep_old:
        drop_whole_generation(store, old, ids)
    return gen, old


def drop_generation(store: DocumentStore, gen: int, patient_id: str) -> None:
    """Delete the patient's rows and tracker in ``gen``."""
    tracker = read_tracker(store, patient_id, gen)
    if tracker.etag is None:
        tracker = read_legacy_tracker(store, patient_id, gen) or tracker
    for key in tracker.rows:
        with suppress(errors.NotFound):
            view_rows.delete_row(store, gen, key)
    delete_tracker(store, patient_id, gen)


def drop_whole_generation(store: DocumentStore, gen: int, ids: list[str]) -> None:
    """Delete every row and tracker of a retired generation: bucket by bucket, the
    trackers read with one query and their rows deleted a batch per view partition, then
    the trackers a batch at a time. ``ids``: the patients, for trackers a release before
    the buckets left (read one by one, only for patients the buckets do not hold)."""
    found: set[str] = set()
    rows: list[RowKey] = []
    held: dict[str, list[str]] = {}  # bucket → patients whose rows are in ``rows``

    def flush() -> None:
        view_rows.delete_rows(store, gen, rows)  # fuller batches: many buckets' rows at once
        for bucket, moved in held.items():
            delete_trackers(store, gen, bucket, moved)
        rows.clear()
        held.clear()

    for bucket in buckets():
        for tracker in bucket_trackers(store, gen, bucket):
            rows.extend(tracker.rows)
            held.setdefault(bucket, []).append(tracker.state.patient_id)
            found.add(tracker.state.patient_id)
        if len(rows) >= DROP_CHUNK:
            flush()
    flush()
    for patient_id in ids:
        if patient_id not in found and read_legacy_tracker(store, patient_id, gen):
            drop_generation(store, gen, patient_id)
    for ward in ward_shifts.wards(store):
        ward_shifts.drop_ward(store, gen, ward)


@dataclass
class Report:
    patients: int = 0
    behind: list[str] = field(default_factory=list)  # tracker older than the source
    # patient (or "ward <code>": its shift rows) → problems
    drifted: dict[str, list[str]] = field(default_factory=dict)
    repaired: int = 0


def check(store: DocumentStore, ids: list[str], *, repair: bool = False,
          progress: Progress = lambda n: None) -> Report:
    """Compare each patient's rows in the active generation with its source record, and
    each ward's shift rows with the shifts the ward keeps."""
    gen = generations.pointer(store)["active"]
    report = Report()
    for patient_id in ids:
        report.patients += 1
        state = read_tracker(store, patient_id, gen).state
        try:
            problems = check_patient(store, gen, patient_id)
            source_seq = read_source(store, patient_id).seq
        except Exception as exc:  # noqa: BLE001 - one unprojectable record is reported
            report.drifted[patient_id] = [f"record cannot be projected ({type(exc).__name__})"]
            progress(1)
            continue
        if state.seq < source_seq:
            report.behind.append(patient_id)
        if problems:
            report.drifted[patient_id] = problems
        if repair and (problems or state.seq < source_seq):
            rebuild_patient(store, gen, patient_id, repair=True)
            report.repaired += 1
        progress(1)
    for ward in ward_shifts.wards(store):
        problems = ward_shifts.check_ward(store, gen, ward)
        if problems:
            report.drifted[f"ward {ward}"] = problems
            if repair:
                ward_shifts.rebuild_ward(store, gen, ward, repair=True)
                report.repaired += 1
    return report


def check_patient(store: DocumentStore, gen: int, patient_id: str) -> list[str]:
    """What is wrong with the patient's rows in ``gen``: missing, stale and extra rows."""
    expected = rows_for(read_source(store, patient_id))
    problems = [f"{how} {key[0]} row" for how, key in view_rows.unlike(store, gen, expected)]
    for key in read_tracker(store, patient_id, gen).rows:
        if key not in expected and view_rows.read_row(store, gen, key) is not None:
            problems.append(f"extra {key[0]} row")
    return problems


def settle_layout(store: DocumentStore) -> str | None:
    """Name the first generation's layout in a store that has no generation pointer yet
    (``cosmos_init``, before any process starts): the layout before layouts when a ward's
    list has rows in a partition of its own (views made by an earlier release), else this
    release's. What it did, for the operator, or None (a pointer exists: nothing to do)."""
    if generations.has_pointer(store):
        return None
    gen = generations.FIRST
    old = any(store.query(keys.view(view, f"g{gen}_{bucket}"), Query(), page_size=1).items
              for ward in ward_shifts.wards(store) for view, bucket in view_rows.ward_buckets(ward))
    layout = generations.BEFORE_LAYOUTS if old else generations.LAYOUT
    if not generations.mark_layout(store, layout):
        return None
    if old:
        return (f"views: generation {gen} keeps the layout it was made with (each ward's list "
                "in a partition of its own); 'manage.py rebuild_worklists' moves them into "
                "one partition per ward, online")
    return f"views: generation {gen} uses layout {layout} (one partition per ward)"
