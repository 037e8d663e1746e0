"""The delivery sweeper's state (:mod:`webhooks.delivery.sweeper`): one document,
``V_DeliverySweep/state``, with its change-feed continuations per feed range and the
deliveries it found open (per receiver and patient: the highest sequence owed, when that
event was written, and what the last sweep found it doing). No patient data: stream keys
and sequence numbers only.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import DocumentStore
from hisadmin.core import keys

log = logging.getLogger(__name__)

SWEEP_PK = keys.view("DeliverySweep")
STATE_ID = "state"
DOC_TYPE = "DeliverySweep"


@dataclass
class SweepState:
    continuations: dict[str, str] = field(default_factory=dict)  # feed range → continuation
    # open key → [highest seq owed, when that event was written (epoch s), its state]
    open: dict[str, list[Any]] = field(default_factory=dict)
    swept_at: float = 0.0
    etag: str | None = None


def read_state(store: DocumentStore) -> SweepState:
    doc = store.try_read(SWEEP_PK, STATE_ID)
    if doc is None:
        return SweepState()
    c = doc["docContents"]
    return SweepState(dict(c.get("continuations") or {}), dict(c.get("open") or {}),
                      float(c.get("sweptAt") or 0.0), doc.get("_etag"))


def save_state(store: DocumentStore, state: SweepState) -> None:
    doc = wrap(doc_id=STATE_ID, pk=SWEEP_PK, doc_type=DOC_TYPE, contents={
        "continuations": state.continuations, "open": state.open, "sweptAt": state.swept_at})
    try:
        if state.etag is None:
            store.create(doc)
        else:
            store.replace(doc, if_match=state.etag)
    except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
        # another sweeper saved first: its state stands, ours is found again next sweep
        log.info("delivery sweep: another sweeper saved first")


