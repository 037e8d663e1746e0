"""Patient events as deliveries read them: by stream and sequence (tasks carry ids only)."""

from __future__ import annotations

from typing import Any

from cosmos_backend.outbox import STREAM_ID, event_id
from cosmos_backend.store import DocumentStore
from hisadmin.core import recent_events


def read_event(store: DocumentStore, stream: str, seq: int) -> dict[str, Any] | None:
    """Event ``seq`` of ``stream`` (its contents), or None when it is gone (TTL)."""
    def read(_: list[int]) -> dict[int, dict[str, Any]]:
        doc = store.try_read(stream, event_id(seq))
        return {} if doc is None else {seq: doc["docContents"]}

    # None read when a relay in this process just read it (the light worker).
    return recent_events.read_through(stream, [seq], read).get(seq)


def head(store: DocumentStore, stream: str) -> int:
    """The stream's last sequence (0 when there is none)."""
    doc = store.try_read(stream, STREAM_ID)
    return 0 if doc is None else int(doc["docContents"]["seq"])
