"""Opaque continuation tokens for keyset paging (url-safe base64 of JSON)."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from cosmos_backend import errors


def encode_token(values: list[Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(values)).decode().rstrip("=")


def decode_token(token: str) -> list[Any]:
    try:
        padded = token + "=" * (-len(token) % 4)
        values = orjson.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, orjson.JSONDecodeError) as exc:
        raise errors.InvalidRequest("the continuation token is not valid") from exc
    if not isinstance(values, list):
        raise errors.InvalidRequest("the continuation token is not valid")
    return values
