"""The OpenAPI document completed with what every endpoint shares, so it tells the truth.

The routers declare their own answers (a 201 body, a 409 with ``conflicts``…); what the API
assembly adds to every operation is written here once: the error answers the shell itself can
give (authentication, the role table, validation, the store's 400 / 404 / 412 / 503, the
If-Match rule), each ``application/problem+json`` with the Problem schema (every 409 with
``conflicts``, ConflictProblem), the headers commands answer with (``ETag``, ``Location``,
``X-Consistency-Token``, ``Idempotent-Replayed``), ``WWW-Authenticate`` on 401, and the
``Idempotency-Key`` every write takes.
"""

from __future__ import annotations

from typing import Any

from hisadmin.core import consistency, idempotency
from hisadmin.core.problems import PROBLEM_TYPE
from hisadmin.errors import MAX_REQUEST_URI
from patients.api.schemas import Problem

PROBLEM_REF = "#/components/schemas/Problem"
CONFLICT = "ConflictProblem"
CONFLICT_REF = f"#/components/schemas/{CONFLICT}"
EDITS = frozenset({"put", "patch"})
COMMANDS = frozenset({"post", "put", "patch", "delete"})
NEVER_ON_READS = frozenset({409, 412, 428})

TITLES = {
    400: "Bad request: a malformed paging token, filter or header",
    401: "No valid bearer token or session (WWW-Authenticate: Bearer)",
    403: "The caller's role may not do this",
    404: "No such record",
    409: "Conflicts with the record's current state, or a request with this Idempotency-Key "
    "still running (type …/request-in-progress): conflicts lists what failed (maybe none)",
    412: "If-Match names a version that is no longer current (type …/precondition-failed; "
    "current_etag, ETag: the new one)",
    422: "Invalid input: errors lists each field and what is wrong; an Idempotency-Key used "
    "before for another request: type …/idempotency-key-reused",
    414: f"The path and query string are longer than {MAX_REQUEST_URI:,} bytes (type "
    "…/uri-too-long; max_length)",
    428: "If-Match is required on an edit (type …/precondition-required)",
    503: "The store is busy, or a consistency token not yet applied: retry after Retry-After",
}
HEADERS = {
    "ETag": "the version of the record answered; send it as If-Match to change it",
    "Location": "the created record",
    consistency.HEADER: "the position of this command's change; send it with a worklist read "
    "to see the change there",
    "Retry-After": "seconds to wait before retrying",
    "WWW-Authenticate": "Bearer: send Authorization: Bearer <token>",
    idempotency.REPLAYED: "true when this is the first answer to this Idempotency-Key again",
}
WRITE_PARAMETERS = {
    "If-Match": "the ETag of the version this command is based on (optional on POST and "
    "DELETE); stale: 412, nothing written",
}


def _header(name: str) -> dict[str, Any]:
    return {"description": HEADERS[name], "schema": {"type": "string"}}


def _problem(status: int, existing: dict[str, Any] | None) -> dict[str, Any]:
    """A documented error answer, as problem JSON (a router's own schema kept, but a 409's
    is one with ``conflicts``)."""
    schema: dict[str, Any] = {"$ref": CONFLICT_REF if status == 409 else PROBLEM_REF}
    description = TITLES.get(status, "Error")
    if existing:
        content = existing.get("content") or {}
        given = next(iter(content.values()), {}).get("schema")
        if given and not (status == 409 and given.get("$ref") == PROBLEM_REF):
            schema = given
    answer: dict[str, Any] = {
        "description": description,
        "content": {PROBLEM_TYPE: {"schema": schema}},
    }
    if status == 503:
        answer["headers"] = {"Retry-After": _header("Retry-After")}
    if status == 401:
        answer["headers"] = {"WWW-Authenticate": _header("WWW-Authenticate")}
    return answer


def _conflict_schema() -> dict[str, Any]:
    """The Problem schema with ``conflicts`` required: what every 409 answers."""
    schema = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schema = {**schema, "title": CONFLICT, "properties": {**schema["properties"], "conflicts": {
        "type": "array", "description": "what conflicts: each check that failed, with type "
        "and detail; empty when the title and detail say it all",
        "items": {"type": "object", "required": ["type", "detail"], "properties": {
            "type": {"type": "string"}, "detail": {"type": "string"}}}}}}
    schema["required"] = [*schema.get("required", []), "conflicts"]
    return schema


def _statuses(path: str, method: str, operation: dict[str, Any]) -> set[int]:
    """The error statuses this operation can answer with."""
    statuses = {400, 401, 403, 414, 422, 503}
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
    components.setdefault(CONFLICT, _conflict_schema())
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
                    headers[idempotency.REPLAYED] = _header(idempotency.REPLAYED)
                if method in COMMANDS and "/patients" in path:  # a record's version
                    headers["ETag"] = _header("ETag")
                if str(code) == "201":
                    headers["Location"] = _header("Location")
                if not headers:
                    del answer["headers"]
            if method in COMMANDS:
                _describe_if_match(operation)
                _idempotency_key(operation)
            if method in EDITS or operation.pop("x-if-match-required", False):
                _require_if_match(operation)
            if method in COMMANDS and "/patients/{" in path and "409" in responses:
                responses["409"].setdefault("headers", {})["Location"] = {
                    "description": "409 patient-merged: the record this one was merged into",
                    "schema": {"type": "string"}}
    return schema


def _describe_if_match(operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "header" and parameter.get("name") in WRITE_PARAMETERS:
            parameter.setdefault("description", WRITE_PARAMETERS[parameter["name"]])


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
            "description": "at most 200 characters, per user; a retry with the same key (same "
            "method, path, query and body) replays the first answer with Idempotent-Replayed: "
            "true (another request with it: 422 …/idempotency-key-reused; one still running: "
            "409 …/request-in-progress). Kept IDEMPOTENCY_KEY_HOURS (24 h by default); 409, "
            "412, 429, 503 and 5xx answers are not kept",
            "schema": {"type": "string", "maxLength": idempotency.MAX_KEY_LENGTH},
        }
    )
