"""Read-your-writes: a command's answer names where its events stand in the change feed.

Every unit of work a request opens (:func:`hisadmin.core.store.new_uow`) is noted here for
the request's duration; afterwards :func:`end` turns the events they committed into a
consistency token, ``X-Consistency-Token``: per event stream, the sequence number of its
last event. A reader of the projections sends the token back and is answered once they
have applied those events (:mod:`worklists.read.consistency`).

The token is opaque to clients: ``c1.`` + base64url of a JSON object ``{stream: seq}``.
"""

from __future__ import annotations

import base64
from contextvars import ContextVar, Token
from typing import Any

import orjson

from cosmos_backend import errors
from cosmos_backend.outbox import is_event
from cosmos_backend.uow import UnitOfWork

HEADER = "X-Consistency-Token"
SESSION_KEY = "his_consistency_token"  # the pages carry the last command's token here
WAIT_SECONDS = 5.0  # a reader waits at most this long for the projections
_PREFIX = "c1."

_UOWS: ContextVar[list[UnitOfWork] | None] = ContextVar("his_request_uows", default=None)


class BadToken(errors.InvalidRequest):
    """A consistency token this system did not issue."""


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
                seq = int(doc["docContents"]["seq"])
                pk = doc["partitionKey"]
                out[pk] = max(seq, out.get(pk, 0))
    return out


def end(noted: Token[list[UnitOfWork] | None]) -> str | None:
    """Stop noting; the token of what was committed meanwhile (None: no event)."""
    uows = _UOWS.get() or []
    _UOWS.reset(noted)
    positions = positions_committed(uows)
    return encode(positions) if positions else None


def encode(positions: dict[str, int]) -> str:
    return _PREFIX + base64.urlsafe_b64encode(orjson.dumps(positions)).decode().rstrip("=")


def decode(token: str) -> dict[str, int]:
    """``{stream: seq}`` of a token; :class:`BadToken` when it is not one of ours."""
    raw = (token or "").strip()
    if not raw.startswith(_PREFIX) or len(raw) > 4096:
        raise BadToken("X-Consistency-Token is not a token this system issued.")
    body = raw[len(_PREFIX):]
    try:
        value: Any = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        raise BadToken("X-Consistency-Token is not a token this system issued.") from None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in value.items()):
        raise BadToken("X-Consistency-Token is not a token this system issued.")
    return value
