"""The OpenAPI document completed with what every endpoint shares, so it tells the truth.

The routers declare their own answers (a 201 body, a 409 with ``conflicts``…); what the API
assembly adds to every operation is written here once: the error answers the shell itself can
give (authentication, the role table, validation, the store's 400 / 404 / 412 / 503, the
If-Match rule), each ``application/problem+json`` with the Problem schema, and the headers
commands answer with (``ETag``, ``Location``, ``X-Consistency-Token``).
"""

from __future__ import annotations

import re
from typing import Any

from hisadmin.core import consistency
from hisadmin.core.problems import PROBLEM_TYPE
from patients.api.schemas import Problem

PROBLEM_REF = "#/components/schemas/Problem"
EDITS = frozenset({"put", "patch"})
COMMANDS = frozenset({"post", "put", "patch", "delete"})
NEVER_ON_READS = frozenset({409, 412, 428})
# Creations and recordings that take an Idempotency-Key (hisadmin.core.idempotency).
IDEMPOTENT = re.compile(r"/patients$|/admissions$|/orders$|/administrations$")

TITLES = {
    400: "Bad request: a malformed paging token, filter or header",
    401: "No valid bearer token or session",
    403: "The caller's role may not do this",
    404: "No such record",
    409: "Conflicts with the record's current state",
    412: "If-Match names a version that is no longer current (current_etag, ETag: the new one)",
    422: "Invalid input: errors lists each field and what is wrong",
    428: "If-Match is required on an edit (type …/precondition-required)",
    503: "The store is busy, or a consistency token not yet applied: retry after Retry-After",
}
HEADERS = {
    "ETag": "the version of the record answered; send it as If-Match to change it",
    "Location": "the created record",
    consistency.HEADER: "the position of this command's change; send it with a worklist read "
    "to see the change there",
    "Retry-After": "seconds to wait before retrying",
}


def _header(name: str) -> dict[str, Any]:
    return {"description": HEADERS[name], "schema": {"type": "string"}}


def _problem(status: int, existing: dict[str, Any] | None) -> dict[str, Any]:
    """A documented error answer, as problem JSON (a router's own schema kept)."""
    schema: dict[str, Any] = {"$ref": PROBLEM_REF}
    description = TITLES.get(status, "Error")
    if existing:
        content = existing.get("content") or {}
        given = next(iter(content.values()), {}).get("schema")
        schema = given or schema
    answer: dict[str, Any] = {
        "description": description,
        "content": {PROBLEM_TYPE: {"schema": schema}},
    }
    if status == 503:
        answer["headers"] = {"Retry-After": _header("Retry-After")}
    return answer


def _statuses(path: str, method: str, operation: dict[str, Any]) -> set[int]:
    """The error statuses this operation can answer with."""
    statuses = {400, 401, 403, 422, 503}
    if "{" in path:
        statuses.add(404)
    if method in COMMANDS:
        statuses |= {404, 409, 412}
    if method in EDITS:
        statuses.add(428)
    return statuses


def complete(schema: dict[str, Any]) -> dict[str, Any]:
    """Adds the shared error answers and headers to every operation of ``schema`` (in place);
    returns it."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault(
        "Problem", Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    )
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            # ninja keys the answers by int; JSON (and this) by str
            responses = {
                str(code): answer for code, answer in operation.get("responses", {}).items()
            }
            operation["responses"] = responses
            declared = {int(code) for code in responses if code.isdigit()}
            if method == "get":  # a read changes nothing: no conflict, no precondition
                for status in NEVER_ON_READS & declared:
                    del responses[str(status)]
                declared -= NEVER_ON_READS
            for status in sorted(declared | _statuses(path, method, operation)):
                if status >= 400:
                    responses[str(status)] = _problem(status, responses.get(str(status)))
            for code, answer in responses.items():
                if not str(code).startswith("2"):
                    continue
                headers = answer.setdefault("headers", {})
                if method in COMMANDS:
                    headers[consistency.HEADER] = _header(consistency.HEADER)
                if method in COMMANDS and "/patients" in path:  # a record's version
                    headers["ETag"] = _header("ETag")
                if str(code) == "201":
                    headers["Location"] = _header("Location")
                if not headers:
                    del answer["headers"]
            if method in EDITS:
                _require_if_match(operation)
            if method == "post" and IDEMPOTENT.search(path):
                _idempotency_key(operation)
    return schema


def _require_if_match(operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "header" and parameter.get("name") == "If-Match":
            parameter["required"] = True
            parameter["description"] = (
                "the ETag of the version this edit is based on; without it 428, stale 412"
            )


def _idempotency_key(operation: dict[str, Any]) -> None:
    parameters = operation.setdefault("parameters", [])
    if any(p.get("name") == "Idempotency-Key" for p in parameters):
        return
    parameters.append(
        {
            "in": "header",
            "name": "Idempotency-Key",
            "required": False,
            "description": "at most 200 characters; a retry with the same key replays the first "
            "answer (a different request with it: 422; one still running: 409)",
            "schema": {"type": "string", "maxLength": 200},
        }
    )
