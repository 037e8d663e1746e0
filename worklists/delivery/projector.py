"""Projects events, by id, into every live generation of the views.

The task and dead-letter replays call this: the events are re-read from the patient's stream
(a task carries ids only) and applied by :mod:`worklists.persistence.writer`. The relay
hands a patient's events of one change-feed page over together: they are read in one round
trip, folded in order, and each view row they change is written once. A ward's stream
(nurses assigned to its beds) goes to its shift rows (:mod:`worklists.persistence.ward_shifts`).
"""

from __future__ import annotations

from collections.abc import Iterable

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from hisadmin.core.recent_events import read_events
from worklists.persistence import ward_shifts
from worklists.persistence.generations import live_generations
from worklists.persistence.writer import apply, rebuild_patient


def project_events(store: DocumentStore, stream_pk: str, seqs: Iterable[int]
                   ) -> dict[int, str]:
    """Re-read events ``seqs`` of ``stream_pk`` (a patient's, or a ward's: its shift rows)
    and apply them in every live generation."""
    wanted = sorted(set(seqs))
    found = read_events(store, stream_pk, wanted)
    ward = ward_shifts.ward_of(stream_pk)
    if ward is not None:
        return {gen: ward_shifts.apply_events(store, gen, ward, [found[s] for s in sorted(found)])
                for gen in live_generations(store)}
    patient_id = keys.suffix(stream_pk)
    results = {}
    for gen in live_generations(store):
        if len(found) < len(wanted):
            # Gone (expired): nothing to fold, but the source record is still the truth.
            results[gen] = rebuild_patient(store, gen, patient_id)
        else:
            results[gen] = apply(store, gen, patient_id, [found[s] for s in wanted])
    return results


def project_event(store: DocumentStore, stream_pk: str, seq: int) -> dict[int, str]:
    """Re-read event ``seq`` of ``stream_pk`` and apply it in every live generation."""
    return project_events(store, stream_pk, [seq])
