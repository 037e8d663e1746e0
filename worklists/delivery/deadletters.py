"""Dead letters and held streams: a projection that failed for good, and replaying it.

The letters are stored by :mod:`worklists.persistence.deadletters`, the held markers by
:mod:`hisadmin.core.held_streams`. An event that fails after its retries is lettered and its
patient's stream held (:func:`record_failure`); while held, the stream's later events are
parked as letters unprojected (:func:`park`), so nothing is projected past the failure and
the order of events is kept for the replay. :func:`release_stream` replays a held stream's
letters in sequence order and then removes the marker. Replaying either projects the event
here or hands it to ``send`` (the projection task's queue), which the caller passes in:
this module does not know the task.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams
from hisadmin.core.held_streams import HeldStream
from worklists.delivery.projector import project_event, project_events
from worklists.persistence import deadletters as letters
from worklists.persistence.deadletters import DeadLetter
from worklists.persistence.generations import live_generations
from worklists.persistence.writer import rebuild_patient

Send = Callable[[str, int], None]  # (stream, seq): queue the event for the projections
PARKED = "HeldStream"  # the reason of a parked letter starts with it: never attempted


def reason(exc: BaseException) -> str:
    """Exception class and message only; stores' messages carry ids, not data."""
    return f"{type(exc).__name__}: {exc}"


def record_failure(store: DocumentStore, stream_pk: str, seq: int, exc: BaseException,
                   attempts: int) -> HeldStream:
    """Letter event ``seq`` with its error and hold its stream (at the earliest failure)."""
    letter = letters.record(store, stream_pk=stream_pk, seq=seq, reason=reason(exc),
                            attempts=attempts)
    return held_streams.hold(store, stream_pk=stream_pk, seq=seq,
                             event_type=letter.event_type, occurred_at=letter.occurred_at,
                             reason=letter.reason)


def park(store: DocumentStore, stream_pk: str, seqs: Iterable[int], marker: HeldStream
         ) -> int:
    """Letter events of a held stream without projecting them (they wait for the replay,
    in order); an event lettered already keeps its letter. Returns how many were parked."""
    parked = 0
    for seq in sorted(set(seqs)):
        if letters.read_letter(store, stream_pk, seq) is not None:
            continue
        letters.record(store, stream_pk=stream_pk, seq=seq, attempts=0,
                       reason=f"{PARKED}: waits for event {marker.seq} of this stream")
        parked += 1
    return parked


def held_part(store: DocumentStore, stream_pk: str, seqs: list[int]
              ) -> tuple[list[int], HeldStream | None]:
    """Split ``seqs`` for a task: those to project now and the held marker (None when the
    stream is not held). Events from the held one on are parked by :func:`park`."""
    marker = held_streams.held_now(store).get(stream_pk)
    if marker is not None:
        # The cached view may be up to CACHE_SECONDS old: confirm with one point read (only
        # for a stream seen held, so rare), or an event could be parked just after a release
        # and wait with no marker left to say so.
        marker = held_streams.read(store, stream_pk)
    if marker is None:
        return seqs, None
    park(store, stream_pk, [s for s in seqs if s >= marker.seq], marker)
    return [s for s in seqs if s < marker.seq], marker


def replay(store: DocumentStore, letter: DeadLetter, *, send: Send | None = None) -> str:
    """Send the event through the projection again; it lands here again if it still fails.

    With ``send`` the event is queued for the workers; without, it is projected in this
    process. The letter is removed first: a re-failure writes a fresh one (same id). A
    letter of a held stream goes through :func:`release_stream` instead.
    """
    marker = held_streams.read(store, letter.stream)
    if marker is not None:
        return release_stream(store, marker)
    letters.remove(store, letter)
    if send is not None:
        send(letter.stream, letter.seq)
        return "queued"
    try:
        outcomes = project_event(store, letter.stream, letter.seq)
    except Exception as exc:  # noqa: BLE001 - still failing: back to the dead letters
        record_failure(store, letter.stream, letter.seq, exc, letter.attempts + 1)
        return f"failed again ({type(exc).__name__})"
    return ",".join(f"g{g}:{o}" for g, o in outcomes.items())


def release_stream(store: DocumentStore, marker: HeldStream, *, settle: float | None = None
                   ) -> str:
    """Project a held stream's letters in sequence order, in this process, then remove its
    marker; "released: …", or "still held (…)" when the first of them fails again.

    Tasks may have parked more events while this ran (they see the marker for up to
    :data:`~hisadmin.core.held_streams.CACHE_SECONDS` after it is gone): after ``settle``
    seconds (that long, by default) any such letter is projected too.
    """
    stream = marker.stream
    projected: list[int] = []
    released = False
    while True:
        waiting = letters.letters_of(store, stream)
        if released and not waiting:
            break
        seqs = [letter.seq for letter in waiting]
        try:
            if seqs:
                project_events(store, stream, seqs)
            else:  # no letter left (expired, removed): the record is the truth
                for gen in live_generations(store):
                    rebuild_patient(store, gen, marker.patient_id)
        except Exception as exc:  # noqa: BLE001 - still failing: the stream stays held
            first = waiting[0] if waiting else None
            record_failure(store, stream, first.seq if first else marker.seq, exc,
                           (first.attempts if first else 0) + 1)
            return f"still held ({type(exc).__name__})"
        for letter in waiting:
            letters.remove(store, letter)
        projected.extend(seqs)
        if not released:
            current = held_streams.read(store, stream)
            if current is not None and not held_streams.release(store, current):
                continue  # held again meanwhile: project what it parked
            released = True
            time.sleep(held_streams.CACHE_SECONDS if settle is None else settle)
    done = ", ".join(map(str, sorted(set(projected)))) or "none (rebuilt from the record)"
    return f"released: events {done} projected in order"
