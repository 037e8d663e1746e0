"""Read-your-writes: a command's answer names where its events stand in the change feed.

Every unit of work a request opens (:func:`hisadmin.core.store.new_uow`) is noted here for
the request's duration; afterwards :func:`end` turns the events they committed into a
consistency token, ``X-Consistency-Token``: per event stream, the sequence number of its
last event. A reader of the projections sends the token back and is answered once they
have applied those events (:mod:`worklists.read.consistency`).

The token is opaque to clients: ``{stream: seq}`` signed by :mod:`hisadmin.core.tokens`, so
a reader waits only for a position this system handed out; a forged or altered token is a
:class:`BadToken` (400) at once. A reader waits at most :data:`WAIT_SECONDS`.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

from cosmos_backend.outbox import event_seq, event_stream, is_event
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import tokens

HEADER = "X-Consistency-Token"
SESSION_KEY = "his_consistency_token"  # the pages carry the last command's token here
# A reader waits at most this long for the projections: the bound on how long one request
# may hold a web thread for a token (docs/worklists.md).
WAIT_SECONDS = 5.0

_UOWS: ContextVar[list[UnitOfWork] | None] = ContextVar("his_request_uows", default=None)


# A consistency token this system did not issue, or naming an event that does not exist.
BadToken = tokens.BadConsistencyToken


def begin() -> Token[list[UnitOfWork] | None]:
    """Start noting units of work (one request)."""
    return _UOWS.set([])


def track(uow: UnitOfWork) -> UnitOfWork:
    """Note ``uow`` if a request is being noted; returns it."""
    noted = _UOWS.get()
    if noted is not None:
        noted.append(uow)
    return uow


def positions_committed(uows: list[UnitOfWork]) -> dict[str, int]:
    """Per event stream, the last sequence number the units of work committed."""
    out: dict[str, int] = {}
    for uow in uows:
        for doc in uow.committed:
            if is_event(doc):
                seq, pk = event_seq(doc), event_stream(doc)
                out[pk] = max(seq, out.get(pk, 0))
    return out


def end(noted: Token[list[UnitOfWork] | None]) -> str | None:
    """Stop noting; the token of what was committed meanwhile (None: no event)."""
    uows = _UOWS.get() or []
    _UOWS.reset(noted)
    positions = positions_committed(uows)
    return encode(positions) if positions else None


def encode(positions: dict[str, int]) -> str:
    """The signed token of ``{stream: seq}``."""
    return tokens.sign_positions(positions)


def decode(token: str) -> dict[str, int]:
    """``{stream: seq}`` of a token; :class:`BadToken` when it is not one of ours."""
    return tokens.open_positions(token)
