"""Translate :class:`~cosmos_backend.store.Query` into parameterised Cosmos SQL."""

from __future__ import annotations

import re
from typing import Any

from . import errors
from .store import Query

_SEGMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _ref(path: str) -> str:
    parts = path.split(".")
    if not all(_SEGMENT.match(p) for p in parts):
        raise errors.InvalidRequest(f"unsupported property path {path!r}")
    return "c" + "".join(f'["{p}"]' for p in parts)


def to_sql(query: Query, pk: str) -> tuple[str, list[dict[str, Any]]]:
    # The partition key is in the WHERE clause as well as in the request: the query stays
    # single-partition on every server, including ones that ignore the request header.
    params: list[dict[str, Any]] = [{"name": "@pk", "value": pk}]
    terms = ['c["partitionKey"] = @pk']

    def param(value: Any) -> str:
        name = f"@p{len(params)}"
        params.append({"name": name, "value": value})
        return name

    for cond in query.where:
        ref, op, value = _ref(cond.path), cond.op, cond.value
        if op in ("=", "!="):
            terms.append(f"{ref} {op} {param(value)}")
        elif op in ("<", "<=", ">", ">="):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise errors.InvalidRequest("booleans can only be compared with = and !=")
            terms.append(f"{ref} {op} {param(value)}")
        elif op == "startswith":
            if not isinstance(value, str):
                raise errors.InvalidRequest("startswith needs a string")
            terms.append(f"STARTSWITH({ref}, {param(value)})")
        elif op == "in":
            values = list(value)
            if not values:
                terms.append("false")
            else:
                terms.append(f"{ref} IN ({', '.join(param(v) for v in values)})")
        elif op == "array_contains":
            terms.append(f"ARRAY_CONTAINS({ref}, {param(value)})")
        else:
            raise errors.InvalidRequest(f"unsupported operator {op!r}")
    order = ", ".join(f"{_ref(path)} {direction.upper()}" for path, direction in query.ordering())
    return f"SELECT * FROM c WHERE {' AND '.join(terms)} ORDER BY {order}", params
