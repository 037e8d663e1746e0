"""Dead letters: recording a projection that failed for good, and replaying it.

The letters themselves are stored by :mod:`worklists.persistence.deadletters`. Replaying
either projects the event here or hands it to ``send`` (the projection task's queue), which
the caller passes in: this module does not know the task.
"""

from __future__ import annotations

from collections.abc import Callable

from cosmos_backend.store import DocumentStore
from worklists.delivery.projector import project_event
from worklists.persistence import deadletters as letters
from worklists.persistence.deadletters import DeadLetter

Send = Callable[[str, int], None]  # (stream, seq): queue the event for the projections


def reason(exc: BaseException) -> str:
    """Exception class and message only; stores' messages carry ids, not data."""
    return f"{type(exc).__name__}: {exc}"


def record_failure(store: DocumentStore, stream_pk: str, seq: int, exc: BaseException,
                   attempts: int) -> None:
    letters.record(store, stream_pk=stream_pk, seq=seq, reason=reason(exc), attempts=attempts)


def replay(store: DocumentStore, letter: DeadLetter, *, send: Send | None = None) -> str:
    """Send the event through the projection again; it lands here again if it still fails.

    With ``send`` the event is queued for the workers; without, it is projected in this
    process. The letter is removed first: a re-failure writes a fresh one (same id).
    """
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
