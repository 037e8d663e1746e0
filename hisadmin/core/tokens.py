"""Tokens the system hands out and takes back: page tokens and consistency tokens.

Every such token is signed here, and only here, with Django's signing (HMAC over
``settings.SECRET_KEY``, its fallbacks accepted while a key is rotated), under a salt per
token kind:

- a **page token** (a worklist's ``continuation``/``page``, an audit trail's continuation,
  a FHIR ``_cursor``) wraps the store's own continuation token, signed under a salt that
  also holds the token's *scope*: what it pages (the worklist's view, bucket, filters and
  order; the patient whose events; the FHIR search's reading). A token from another query
  fails its signature like a forged one. The store never sees a token it did not issue for
  that very query;
- a **consistency token** (``X-Consistency-Token``) signs ``{stream: seq}``.

Either kind, altered, forged, truncated, or (a page token) sent with another query, raises
:class:`BadPageToken` / :class:`BadConsistencyToken` before anything is read; the adapters
answer 400 (problem types :data:`BadPageToken.TYPE`, :data:`BadConsistencyToken.TYPE`).
"""

from __future__ import annotations

from typing import Any

from django.core import signing

from cosmos_backend import errors

MAX_TOKEN_LENGTH = 4096  # longer than any token issued here; refused unread
_PAGE_SALT = "hisadmin.tokens.page"
_CONSISTENCY_SALT = "hisadmin.tokens.consistency"


class BadPageToken(errors.InvalidRequest):
    """A page token this system did not issue for this query (400)."""

    TYPE = "/api/v1/problems/bad-page-token"
    TITLE = "Bad page token"


class BadConsistencyToken(errors.InvalidRequest):
    """A consistency token this system did not issue, or naming an event that does not
    exist (400)."""

    TYPE = "/api/v1/problems/bad-consistency-token"
    TITLE = "Bad consistency token"


def _open(token: str, salt: str) -> Any:
    """The signed value of ``token``; :class:`signing.BadSignature` for anything else."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH:
        raise signing.BadSignature("not a token")
    try:
        return signing.Signer(salt=salt).unsign_object(token)
    except signing.BadSignature:
        raise
    except (ValueError, TypeError, UnicodeError) as exc:  # a payload the signature covered
        raise signing.BadSignature(str(exc)) from exc  # but cannot be read: never ours


# ---------------------------------------------------------------------------- page tokens
def sign_page(raw: str | None, *, scope: str) -> str | None:
    """The token a client sees for the store's continuation ``raw`` (None: no next page),
    valid only with the query ``scope`` names."""
    if raw is None:
        return None
    return signing.Signer(salt=f"{_PAGE_SALT}:{scope}").sign_object(raw, compress=True)


def open_page(token: str | None, *, scope: str) -> str | None:
    """The store's continuation in ``token`` (None: the first page); :class:`BadPageToken`
    unless this system signed it for the query ``scope`` names."""
    if not token:
        return None
    try:
        raw = _open(token, f"{_PAGE_SALT}:{scope}")
    except signing.BadSignature:
        raise BadPageToken("The page token is not one this system issued for this query; "
                           "start again from the first page.") from None
    if not isinstance(raw, str):
        raise BadPageToken("The page token is not one this system issued for this query.")
    return raw


# ---------------------------------------------------------------------- consistency tokens
def sign_positions(positions: dict[str, int]) -> str:
    """The consistency token of ``{stream: seq}``."""
    return signing.Signer(salt=_CONSISTENCY_SALT).sign_object(positions, compress=True)


def open_positions(token: str | None) -> dict[str, int]:
    """``{stream: seq}`` of a consistency token; :class:`BadConsistencyToken` unless this
    system signed it."""
    refused = BadConsistencyToken("X-Consistency-Token is not a token this system issued.")
    try:
        value = _open((token or "").strip(), _CONSISTENCY_SALT)
    except signing.BadSignature:
        raise refused from None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in value.items()):
        raise refused
    return value


def events_scope(patient_id: str) -> str:
    """The scope of a page token of a patient's audit trail (the API's and the chart's)."""
    return f"events:{patient_id}"
