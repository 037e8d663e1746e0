"""Observation sets, one document per set in the patient's partition
(``obs-<taken at, UTC, to the microsecond>-<id>``, so the ids sort by the time taken), and
one summary per patient (``observations``: the SpO2 scale in force, the latest scored set,
the trend; :mod:`patients.domain.observation_summary`), written with the record's events in
one batch (see :mod:`patients.use_cases.observations`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys

OBSERVATION = "Observation"
SUMMARY = "ObservationSummary"
SUMMARY_ID = "observations"
ID_PREFIX = "obs-"


def doc_id(observation_id: str) -> str:
    return f"{ID_PREFIX}{observation_id}"


def new_id(taken_at: datetime, unique: str) -> str:
    """An id that sorts by the time taken (newest last), unique by ``unique``."""
    return f"{taken_at.astimezone(UTC):%Y%m%dT%H%M%S%f}-{unique[:8]}"


def stage_set(uow: UnitOfWork, patient_id: str, observation: dict[str, Any]) -> None:
    uow.add(wrap(doc_id=doc_id(observation["observationId"]), pk=keys.patient(patient_id),
                 doc_type=OBSERVATION, contents=observation))


def load_set(uow: UnitOfWork, patient_id: str, observation_id: str) -> dict[str, Any] | None:
    doc = uow.try_get(keys.patient(patient_id), doc_id(observation_id))
    return None if doc is None or doc["docType"] != OBSERVATION else dict(doc["docContents"])


def update_set(uow: UnitOfWork, patient_id: str, observation: dict[str, Any]) -> None:
    uow.update(wrap(doc_id=doc_id(observation["observationId"]), pk=keys.patient(patient_id),
                    doc_type=OBSERVATION, contents=observation))


def load_summary(uow: UnitOfWork, patient_id: str) -> dict[str, Any] | None:
    """The summary through ``uow`` (tracked: the save replaces this very version, so two
    nurses recording at once cannot both move it from the same place)."""
    doc = uow.try_get(keys.patient(patient_id), SUMMARY_ID)
    return None if doc is None else dict(doc["docContents"])


def stage_summary(uow: UnitOfWork, patient_id: str, summary: dict[str, Any], *,
                  exists: bool) -> None:
    doc = wrap(doc_id=SUMMARY_ID, pk=keys.patient(patient_id), doc_type=SUMMARY,
               contents=summary)
    if exists:
        uow.update(doc)
    else:
        uow.add(doc)


def summary(store: DocumentStore, patient_id: str) -> dict[str, Any] | None:
    doc = store.try_read(keys.patient(patient_id), SUMMARY_ID)
    return None if doc is None else dict(doc["docContents"])


def page(store: DocumentStore, patient_id: str, *, limit: int = 20,
         continuation: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """The patient's sets, the latest taken first, a page at a time (one query)."""
    result = store.query(keys.patient(patient_id), Query(
        where=(Cond("docType", "=", OBSERVATION),), order_by=(("id", "DESC"),)),
        page_size=limit, continuation=continuation)
    return [dict(d["docContents"]) for d in result.items], result.continuation


def one(store: DocumentStore, patient_id: str, observation_id: str) -> dict[str, Any] | None:
    """The set with its version (``etag``), or None."""
    doc = store.try_read(keys.patient(patient_id), doc_id(observation_id))
    if doc is None or doc["docType"] != OBSERVATION:
        return None
    return {**doc["docContents"], "etag": doc["_etag"]}


def committed_etag(uow: UnitOfWork, observation_id: str) -> str | None:
    """The version of the set as the command through ``uow`` just wrote it (no read)."""
    wanted = doc_id(observation_id)
    return next((d["_etag"] for d in reversed(uow.committed) if d["id"] == wanted), None)
