"""Transactional outbox: events are documents written in the same batch as the change.

Each stream (a partition, e.g. one patient) has a ``stream`` document holding the last
sequence number. Appending events bumps it under the unit of work's etag check and adds one
event document per event with id ``evt-<seq>``, so two concurrent commands on one stream can
never both commit, and consumers can order, deduplicate and detect gaps per stream.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from cosmos_backend.uow import UnitOfWork

STREAM_ID = "stream"
EVENT_DOC_TYPE = "Event"
STREAM_DOC_TYPE = "Stream"


def event_id(seq: int) -> str:
    return f"evt-{seq:010d}"


def is_event(doc: Document) -> bool:
    return doc.get("docType") == EVENT_DOC_TYPE


def event_stream(doc: Document) -> str:
    """The stream (partition) an event document belongs to."""
    return str(doc["partitionKey"])


def event_seq(doc: Document) -> int:
    """An event document's sequence number in its stream."""
    return int(doc["docContents"]["seq"])


def event_payload(doc: Document) -> dict[str, Any]:
    """An event document's contents, as :func:`read_events` answers them (the stored event:
    ``eventId``, ``stream``, ``seq``, ``type``, ``occurredAt``, ``actor``, ``data`` …)."""
    return doc["docContents"]


def _head(doc: Document | None) -> int:
    return 0 if doc is None else int(doc["docContents"]["seq"])


def stream_seq(uow: UnitOfWork, pk: str) -> int:
    return _head(uow.try_get(pk, STREAM_ID))


def stream_head(store: DocumentStore, pk: str) -> int:
    """The stream's last sequence number (0 when it has none), in one point read."""
    return _head(store.try_read(pk, STREAM_ID))


def read_events(store: DocumentStore, pk: str, seqs: list[int]) -> dict[int, dict[str, Any]]:
    """Events ``seqs`` of stream ``pk`` by sequence number (their contents), in one round
    trip: a point read for one, a query of the partition for several. Events gone (their
    time to live) are missing from the answer."""
    if len(seqs) == 1:
        doc = store.try_read(pk, event_id(seqs[0]))
        return {} if doc is None else {seqs[0]: event_payload(doc)}
    docs = store.query_all(pk, Query(where=(Cond("id", "in", [event_id(s) for s in seqs]),)),
                           page_size=len(seqs) or 1)
    return {event_seq(doc): event_payload(doc) for doc in docs}


def start_stream(uow: UnitOfWork, pk: str, *, fields: Mapping[str, Any] | None = None) -> None:
    """Register a new, empty stream in ``uow`` (a new partition: nothing to read first).

    ``fields``: top-level fields the stream document carries (they are kept on every
    append), so a caller can read it in the same query as its other documents.
    """
    doc = wrap(doc_id=STREAM_ID, pk=pk, doc_type=STREAM_DOC_TYPE, contents={"seq": 0})
    uow.add({**doc, **(fields or {})})


def append_events(
    uow: UnitOfWork,
    pk: str,
    events: list[tuple[str, dict[str, Any]]],
    *,
    actor: Mapping[str, Any],
    now: datetime | None = None,
    correlation_id: str | None = None,
) -> list[Document]:
    """Register ``(event_type, data)`` events on stream ``pk`` in ``uow``; returns their docs.

    ``actor``: who did it, as plain data (an id, a name, roles), copied into every event.
    The stream document is read through ``uow`` unless the caller loaded or started it.
    """
    if not events:
        return []
    occurred = (now or datetime.now(UTC)).isoformat()
    stream = uow.try_get(pk, STREAM_ID)
    if stream is None:
        stream = uow.add(wrap(doc_id=STREAM_ID, pk=pk, doc_type=STREAM_DOC_TYPE,
                              contents={"seq": 0}))
    seq = int(stream["docContents"]["seq"])
    docs = []
    for event_type, data in events:
        seq += 1
        docs.append(uow.add(wrap(
            doc_id=event_id(seq),
            pk=pk,
            doc_type=EVENT_DOC_TYPE,
            sub_type=event_type,
            contents={
                "eventId": str(uuid.uuid4()),
                "stream": pk,
                "seq": seq,
                "type": event_type,
                "occurredAt": occurred,
                "actor": dict(actor),
                "correlationId": correlation_id,
                "data": data,
            },
        )))
    stream["docContents"]["seq"] = seq
    stream["docContents"]["lastEventAt"] = occurred
    if stream.get("_etag") is not None:
        uow.update(stream)
    return docs
