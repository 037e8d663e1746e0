"""Translate :class:`~cosmos_backend.store.Query` into parameterised Cosmos SQL.

Only the query's own terms go into the WHERE clause: the partition is chosen by the request's
``partition_key``, as on Cosmos DB. Input the embedded engine refuses is refused here too,
with the same exception, before anything is sent.
"""

from __future__ import annotations

import re
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import Query

_SEGMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SYSTEM_PATHS = ("id", "partitionKey", "_ts", "_lsn")  # scalars: never arrays


def _ref(path: str) -> str:
    parts = path.split(".")
    if not all(_SEGMENT.match(p) for p in parts):
        raise errors.InvalidRequest(f"unsupported property path {path!r}")
    return "c" + "".join(f'["{p}"]' for p in parts)


def _scalar(value: Any) -> None:
    if not isinstance(value, (bool, int, float, str)):
        raise errors.InvalidRequest(f"cannot compare with {type(value).__name__} values")


def to_sql(query: Query) -> tuple[str, list[dict[str, Any]]]:
    params: list[dict[str, Any]] = []
    terms: list[str] = []

    def param(value: Any) -> str:
        name = f"@p{len(params)}"
        params.append({"name": name, "value": value})
        return name

    for cond in query.where:
        ref, op, value = _ref(cond.path), cond.op, cond.value
        if op in ("=", "!="):
            if value is not None:
                _scalar(value)
            terms.append(f"{ref} {op} {param(value)}")
        elif op in ("<", "<=", ">", ">="):
            if isinstance(value, bool):
                raise errors.InvalidRequest("booleans can only be compared with = and !=")
            _scalar(value)
            terms.append(f"{ref} {op} {param(value)}")
        elif op == "startswith":
            if not isinstance(value, str):
                raise errors.InvalidRequest("startswith needs a string")
            terms.append(f"STARTSWITH({ref}, {param(value)})")
        elif op == "in":
            values = list(value)
            for v in values:
                if v is not None:
                    _scalar(v)
            terms.append(f"{ref} IN ({', '.join(param(v) for v in values)})" if values else "false")
        elif op == "array_contains":
            if cond.path in _SYSTEM_PATHS:
                raise errors.InvalidRequest("array_contains needs a document path")
            if value is not None:
                _scalar(value)
            terms.append(f"ARRAY_CONTAINS({ref}, {param(value)})")
        else:
            raise errors.InvalidRequest(f"unsupported operator {op!r}")
    keys = []
    for path, direction in query.ordering():
        if direction.upper() not in ("ASC", "DESC"):
            raise errors.InvalidRequest(f"unsupported sort direction {direction!r}")
        keys.append(f"{_ref(path)} {direction.upper()}")
    where = f" WHERE {' AND '.join(terms)}" if terms else ""
    return f"SELECT * FROM c{where} ORDER BY {', '.join(keys)}", params
