"""Translate :class:`~cosmos_backend.store.Query` and indexing policies into SQLite.

Ordering follows Cosmos DB across types as far as the product needs it: missing values
(NULL) sort first ascending, numbers before strings. Comparisons only match values of the
compared value's type, as Cosmos does (``c.x > 5`` never matches a string, ``c.x = 1`` never
matches ``true``, ``c.x = null`` never matches a missing property).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cosmos_backend import errors
from cosmos_backend.store import Cond, Query, validate_path, validate_query, value_kind

HASH_SPACE = 1 << 16  # feed ranges split the crc32 of the partition key modulo this
# Top-level ``Query*`` fields exist only for indexing (see envelope.wrap); column q marks the
# documents that carry them.
QUERY_FIELD_PREFIX = "Query"
# The TTL rule in SQL, one parameter (now): a row past its expiry time is absent for every
# read, write, query and feed read until purge_expired deletes it.
LIVE = "(exp IS NULL OR exp > ?)"
EXPIRED = "(exp IS NOT NULL AND exp <= ?)"
# Column pm (presence mask): bit n is clear when the document lacks the indexed path the
# store assigned bit n to; set bits are "present or not known". Each index holds only the
# rows that have its leading path, so a document updates only the indexes of paths it has.
PRESENCE_BITS = 62
ALL_PRESENT = -1  # pm of a row written without a mask: in every index, as before masks


def has_query_fields(doc: Mapping[str, Any]) -> int:
    return int(any(key.startswith(QUERY_FIELD_PREFIX) for key in doc))


def has_path(bit: int) -> str:
    """The SQL term (and partial-index predicate) "the row may have the path of ``bit``"."""
    return f"(pm & {bit}) != 0"


@dataclass(frozen=True)
class PresenceChecks:
    """How to compute pm for a set of ``path → bit``: top-level keys by one pass over the
    document's keys (most indexed paths are top-level), nested paths one by one."""

    top: dict[str, int]
    top_bits: int
    nested: tuple[tuple[tuple[str, ...], int], ...]

    @classmethod
    def of(cls, bits: Mapping[str, int]) -> PresenceChecks:
        top = {path: bit for path, bit in bits.items() if "." not in path}
        nested = tuple((tuple(path.split(".")), bit) for path, bit in bits.items() if "." in path)
        all_top = 0
        for bit in top.values():
            all_top |= bit
        return cls(top, all_top, nested)


def presence_mask(doc: Mapping[str, Any], checks: PresenceChecks) -> int:
    """pm of ``doc``: every bit set but those of the checked paths it lacks.

    Present means what ``json_type(doc, '$.path') IS NOT NULL`` means: a JSON null counts,
    a path through a non-object does not.
    """
    present = 0
    top = checks.top
    for key in doc:
        bit = top.get(key)
        if bit is not None:
            present |= bit
    clear = checks.top_bits & ~present
    for keys, bit in checks.nested:
        node: Any = doc
        for key in keys:
            if not isinstance(node, dict) or key not in node:
                clear |= bit
                break
            node = node[key]
    return ~clear


def presence_terms(query: Query, bits: Mapping[str, int],
                   masks: Sequence[int] | None) -> list[str]:
    """The :func:`has_path` terms every row ``query`` can return satisfies, so SQLite may
    read it from the partial indexes.

    A condition on a path never matches a document without it (Cosmos DB compares undefined
    with nothing), so filtered paths always qualify. A sort path qualifies only when every
    row that can match has it (a missing one sorts first): ``masks`` are the distinct pm
    values of the partition (None: unknown, the sort paths do not qualify).
    """
    filtered = sorted({c.path for c in query.where if c.path in bits})
    need = 0
    for path in filtered:
        need |= bits[path]
    terms = [has_path(bits[path]) for path in filtered]
    for path, _ in query.ordering():
        if path in bits and path not in filtered and masks is not None:
            bit = bits[path]
            if all(m & bit for m in masks if m & need == need):
                terms.append(has_path(bit))
    return terms


_COLUMNS = {"id": "id", "partitionKey": "pk", "_ts": "ts", "_lsn": "lsn"}


def column_expr(path: str) -> str:
    if path in _COLUMNS:
        return _COLUMNS[path]
    validate_path(path)
    return f"json_extract(doc, '$.{path}')"


_COLUMN_TYPES = {"id": str, "pk": str, "ts": int, "lsn": int}
_JSON_TYPES = {str: "('text')", int: "('integer', 'real')", bool: "('true', 'false')"}


def _json_path(expr: str) -> str:
    """'json_extract(doc, '$.a.b')' → '$.a.b' (paths are validated by column_expr)."""
    return expr[len("json_extract(doc, '"):-2]


def _same_type(expr: str, value: Any) -> str:
    """SQL true only where ``expr`` holds a JSON value of ``value``'s type.

    Cosmos DB compares values of different types as undefined (never a match), while
    json_extract folds true/false into 1/0 and returns arrays and objects as text; the
    JSON type of the stored value tells them apart.
    """
    kind = value_kind(value)
    if expr in _COLUMN_TYPES:
        return "1" if _COLUMN_TYPES[expr] is kind else "0"
    return f"json_type(doc, '{_json_path(expr)}') IN {_JSON_TYPES[kind]}"


def _equal(expr: str, value: Any) -> tuple[str, list[Any]]:
    if value is None:
        if expr in _COLUMN_TYPES:
            return "0", []
        # JSON null only: a missing property is undefined in Cosmos DB, not null.
        return f"json_type(doc, '{_json_path(expr)}') = 'null'", []
    guard = _same_type(expr, value)
    if guard == "0":
        return "0", []
    # The type test costs a JSON lookup per candidate row, so it is added only where the
    # plain comparison can be fooled: 0/1 against booleans, '[...'/'{...' against arrays
    # and objects, and booleans themselves.
    if _ambiguous(value) and guard != "1":
        return f"({expr} = ? AND {guard})", [value]
    return f"{expr} = ?", [value]


def _ambiguous(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, (int, float)):
        return value in (0, 1)
    return isinstance(value, str) and value[:1] in ("[", "{")


def _successor(prefix: str) -> str | None:
    """The least string greater than every string starting with ``prefix`` (None: none)."""
    chars = prefix.rstrip("\U0010ffff")
    if not chars:
        return None
    last = ord(chars[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # surrogates cannot be stored; skip to the next scalar
        last = 0xE000
    return chars[:-1] + chr(last)


def _cond(cond: Cond) -> tuple[str, list[Any]]:
    expr = column_expr(cond.path)
    op, value = cond.op, cond.value
    if op == "=":
        return _equal(expr, value)
    if op == "!=":
        if value is None:
            return "0", []  # null compared with anything but null is undefined in Cosmos DB
        return f"({expr} != ? AND {_same_type(expr, value)})", [value]
    if op in ("<", "<=", ">", ">="):
        return f"({expr} {op} ? AND {_same_type(expr, value)})", [value]
    if op == "startswith":
        upper = _successor(value)
        # A range, not LIKE/substr, so an index on the path can serve it.
        terms, bounds = [f"{expr} >= ?"], [value]
        if upper is not None:
            terms.append(f"{expr} < ?")
            bounds.append(upper)
        if not value or value[0] in "[{":  # only then can array/object text fall in range
            terms.append(_same_type(expr, value))
        return "(" + " AND ".join(terms) + ")", bounds
    if op == "in":
        values = list(value)
        if not values:
            return "0", []
        if expr in _COLUMN_TYPES:  # typed columns: drop values of another type
            values = [v for v in values if v is not None and _same_type(expr, v) == "1"]
            if not values:
                return "0", []
        elif any(_ambiguous(v) for v in values):
            parts = [_equal(expr, v) for v in values]
            return ("(" + " OR ".join(sql for sql, _ in parts) + ")",
                    [a for _, part_args in parts for a in part_args])
        return f"{expr} IN ({', '.join('?' * len(values))})", values
    # array_contains: validate_query refused every other operator, and scalar paths.
    path = _json_path(expr)
    if value is None:
        element = "type = 'null'"
        args: list[Any] = []
    else:
        kind = value_kind(value)
        if kind is bool:
            element = f"type = '{'true' if value else 'false'}'"
            args = []
        else:
            element = f"value = ? AND type IN {_JSON_TYPES[kind]}"
            args = [value]
    # json_each walks objects and scalars too; ARRAY_CONTAINS is false for those.
    return (f"(json_type(doc, '{path}') = 'array' AND EXISTS (SELECT 1 FROM "
            f"json_each(doc, '{path}') WHERE {element}))", args)


def _after(keys: list[tuple[str, str]], values: list[Any], *,
           nulls: bool = True) -> tuple[str, list[Any]]:
    """Rows strictly after ``values`` in the ordering ``keys`` (keyset paging).

    With ``nulls=False`` (a descending leading key at a non-null value) the rows whose
    leading key is NULL are left out: they come last and are read by a second statement,
    because ``x <= ? OR x IS NULL`` is not an index range and SQLite would scan every row
    before the continuation point instead of seeking to it.
    """
    if len(values) != len(keys):
        raise errors.InvalidRequest("the continuation token does not fit this query")
    terms: list[str] = []
    args: list[Any] = []
    for i, (expr, direction) in enumerate(keys):
        parts: list[str] = []
        for j, (prev_expr, _) in enumerate(keys[:i]):
            parts.append(f"{prev_expr} IS ?")
            args.append(values[j])
        value = values[i]
        if direction == "ASC":
            if value is None:
                parts.append(f"{expr} IS NOT NULL")
            else:
                parts.append(f"{expr} > ?")
                args.append(value)
        else:
            if value is None:
                parts.append("0")
            elif i == 0 and not nulls:
                parts.append(f"{expr} < ?")
                args.append(value)
            else:
                parts.append(f"({expr} < ? OR {expr} IS NULL)")
                args.append(value)
        terms.append("(" + " AND ".join(parts) + ")")
    # The leading key's inclusive bound lets SQLite seek in the index before the exact test.
    lead_expr, lead_dir = keys[0]
    lead = values[0]
    bound: list[str] = []
    bound_args: list[Any] = []
    if lead is not None:
        if lead_dir == "ASC":
            bound.append(f"{lead_expr} >= ?")
        elif nulls:
            bound.append(f"({lead_expr} <= ? OR {lead_expr} IS NULL)")
        else:
            bound.append(f"{lead_expr} <= ?")
        bound_args.append(lead)
    sql = " AND ".join(bound + ["(" + " OR ".join(terms) + ")"])
    return sql, bound_args + args


Segment = tuple[str, list[Any]]


def compile_segments(table: str, query: Query, after: list[Any] | None,
                     terms: Sequence[str] = ()) -> tuple[list[Segment], int]:
    """Statements whose results, concatenated in order, are the page; and the key count.

    Each selects doc, etag, ts, lsn and the sort keys; params: pk, now, *args, limit. A
    continuation may need two: NULLs of the leading key sort first ascending and last
    descending, and ``x <= ? OR x IS NULL`` is no index range, so the NULL group is read by a
    statement of its own. Run continuations on the index the first page uses (SQLite 3.40
    drops an expression index from its plans when ``IS NULL`` tests that expression).
    ``terms`` are :func:`presence_terms` of the query: literal, so the partial indexes apply.
    """
    validate_query(query)
    keys = [(column_expr(path), direction.upper()) for path, direction in query.ordering()]
    where = ["pk = ?", LIVE]
    args: list[Any] = []
    for cond in query.where:
        sql, cond_args = _cond(cond)
        where.append(sql)
        args.extend(cond_args)
    where.extend(terms)
    select_keys = ", ".join(expr for expr, _ in keys)

    def statement(extra: list[str], extra_args: list[Any], skip: int = 0) -> Segment:
        # skip=1 where the leading key is fixed (IS NULL): ordering by it as well would
        # make SQLite sort the group instead of reading it in index order.
        order = ", ".join(f"{expr} {direction}" for expr, direction in keys[skip:])
        return (f"SELECT doc, etag, ts, lsn, {select_keys} FROM {table} "
                f"WHERE {' AND '.join(where + extra)}"
                f"{f' ORDER BY {order}' if order else ''} LIMIT ?", args + extra_args)

    if after is None:
        return [statement([], [])], len(keys)
    if len(after) != len(keys):
        raise errors.InvalidRequest("the continuation token does not fit this query")
    lead_expr, lead_dir = keys[0]
    if after[0] is None:
        # Inside the NULL group of the leading key: finish it, then (ascending only) go on
        # to the non-null rows. Two plain statements, so each can seek in the index.
        segments = []
        if len(keys) > 1:
            sql, rest_args = _after(keys[1:], after[1:])
            segments.append(statement([f"{lead_expr} IS NULL", sql], rest_args, skip=1))
        if lead_dir == "ASC":
            segments.append(statement([f"{lead_expr} IS NOT NULL"], []))
        return segments or [statement(["0"], [])], len(keys)
    if lead_dir == "DESC":
        sql, after_args = _after(keys, after, nulls=False)
        if lead_expr in _COLUMNS.values():  # id, _ts, _lsn are never NULL: no tail
            return [statement([sql], after_args)], len(keys)
        tail = statement([f"{lead_expr} IS NULL"], [], skip=1)
        return [statement([sql], after_args), tail], len(keys)
    sql, after_args = _after(keys, after)
    return [statement([sql], after_args)], len(keys)


def compile_query(table: str, query: Query, after: list[Any] | None,
                  bits: Mapping[str, int] | None = None) -> tuple[str, list[Any], int]:
    """The first (index-seeking) statement of :func:`compile_segments`, for plan checks: as
    if every document of the partition had every indexed path. ``bits``: the table's
    presence bits (default: those its store provisioned in this process)."""
    bits = _provisioned_bits.get(table, {}) if bits is None else bits
    terms = presence_terms(query, bits, [ALL_PRESENT])
    segments, n_keys = compile_segments(table, query, after, terms)
    sql, args = segments[0]
    return sql, args, n_keys


def _path_of(cosmos_path: str) -> str | None:
    """'/docContents/wardId/?' or '/docContents/wardId' → 'docContents.wardId'."""
    path = cosmos_path.strip("/")
    if path.endswith("/?"):
        path = path[:-2]
    if "*" in path or "?" in path or not path:
        return None
    return path.replace("/", ".")


def _index_columns(policy: Mapping[str, Any]) -> list[tuple[list[str], str | None]]:
    """Columns of each index the policy needs, with its leading document path (if any)."""
    column_sets: list[tuple[list[str], str | None]] = []
    for composite in policy.get("compositeIndexes", []):
        cols = []
        paths = []
        for entry in composite:
            path = _path_of(entry["path"])
            if path is None:
                break
            desc = entry.get("order", "ascending").lower().startswith("desc")
            cols.append(column_expr(path) + (" DESC" if desc else ""))
            paths.append(path)
        else:
            if paths:
                column_sets.append((cols, None if paths[0] in _COLUMNS else paths[0]))
    for included in policy.get("includedPaths", []):
        path = _path_of(included["path"])
        if path is not None and path not in _COLUMNS:
            column_sets.append(([column_expr(path)], path))
    # An index whose columns begin another index's (same leading path, so the same partial
    # predicate) adds nothing here: every query is within one partition and always ends
    # its ordering with ``id``, so SQLite can seek and sort on the longer one. Skipping it
    # saves a B-tree update on every write (Cosmos keeps its own per-path range indexes;
    # this is SQLite's view).
    def bare(cols: list[str]) -> tuple[str, ...]:
        return tuple(c.removesuffix(" DESC") for c in cols)

    kept: list[tuple[list[str], str | None]] = []
    for cols, lead in column_sets:
        key = bare(cols)
        if any(len(other) > len(key) and bare(other)[:len(key)] == key
               for other, _ in column_sets):
            continue
        if any(bare(c) == key for c, _ in kept):
            continue
        kept.append((cols, lead))
    return kept


def leading_paths(policy: Mapping[str, Any]) -> list[str]:
    """The document paths that lead an index of the policy: the ones pm tracks."""
    return list(dict.fromkeys(lead for _, lead in _index_columns(policy) if lead is not None))


_provisioned_bits: dict[str, Mapping[str, int]] = {}


def remember_bits(table: str, bits: Mapping[str, int]) -> None:
    """Record a provisioned table's presence bits (for :func:`compile_query`)."""
    _provisioned_bits[table] = dict(bits)


def index_statements(table: str, policy: Mapping[str, Any],
                     bits: Mapping[str, int] | None = None) -> Iterator[tuple[str, str]]:
    """CREATE INDEX statements equivalent to the policy's composite and included paths.

    An index led by a path that has a presence bit is partial on it: documents without
    that path (most documents, for most paths) skip its upkeep on every write.
    """
    for cols, lead in _index_columns(policy):
        cols = ["pk", *cols]
        bit = (bits or {}).get(lead) if lead is not None else None
        where = f" WHERE {has_path(bit)}" if bit else ""
        name = f"{table}_ix_" + hashlib.sha1(("|".join(cols) + where).encode()).hexdigest()[:10]
        yield name, f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({', '.join(cols)}){where}"
