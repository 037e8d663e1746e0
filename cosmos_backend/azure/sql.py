"""Translate :class:`~cosmos_backend.store.Query` into parameterised Cosmos SQL.

Only the query's own terms go into the WHERE clause: the partition is chosen by the request's
``partition_key``, as on Cosmos DB. Input the embedded engine refuses is refused here too, by
the same :func:`~cosmos_backend.store.validate_query`, before anything is sent.
"""

from __future__ import annotations

from typing import Any

from cosmos_backend.store import Query, validate_query


def _ref(path: str) -> str:
    return "c" + "".join(f'["{part}"]' for part in path.split("."))


def to_sql(query: Query, *, count: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The query as SQL and parameters; ``count``: ``SELECT VALUE COUNT(1)`` of its terms."""
    validate_query(query)
    params: list[dict[str, Any]] = []
    terms: list[str] = []

    def param(value: Any) -> str:
        name = f"@p{len(params)}"
        params.append({"name": name, "value": value})
        return name

    for cond in query.where:
        ref, op, value = _ref(cond.path), cond.op, cond.value
        if op == "startswith":
            terms.append(f"STARTSWITH({ref}, {param(value)})")
        elif op == "in":
            values = list(value)
            terms.append(f"{ref} IN ({', '.join(param(v) for v in values)})" if values else "false")
        elif op == "array_contains":
            terms.append(f"ARRAY_CONTAINS({ref}, {param(value)})")
        else:  # =, !=, <, <=, >, >=
            terms.append(f"{ref} {op} {param(value)}")
    keys = [f"{_ref(path)} {direction.upper()}" for path, direction in query.ordering()]
    where = f" WHERE {' AND '.join(terms)}" if terms else ""
    if count:
        return f"SELECT VALUE COUNT(1) FROM c{where}", params
    return f"SELECT * FROM c{where} ORDER BY {', '.join(keys)}", params
