"""Projects one event, by id, into every live generation of the views.

The task and dead-letter replays call this: the event is re-read from the patient's stream
(a task carries ids only) and applied by :mod:`worklists.persistence.writer`.
"""

from __future__ import annotations

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from worklists.persistence.feed import read_event
from worklists.persistence.generations import live_generations
from worklists.persistence.writer import apply, rebuild_patient


def project_event(store: DocumentStore, stream_pk: str, seq: int) -> dict[int, str]:
    """Re-read event ``seq`` of ``stream_pk`` and apply it in every live generation."""
    event = read_event(store, stream_pk, seq)
    patient_id = keys.suffix(stream_pk)
    results = {}
    for gen in live_generations(store):
        if event is None:
            # Gone (expired): nothing to fold, but the source record is still the truth.
            results[gen] = rebuild_patient(store, gen, patient_id)
        else:
            results[gen] = apply(store, gen, patient_id, event)
    return results
