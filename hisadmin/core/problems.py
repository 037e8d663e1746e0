"""JSON answers of the API, and RFC 9457 problem documents for its errors.

Routers and the API assembly both answer through these, so every response is rendered the
same way (orjson) without a router importing the assembly.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse

PROBLEM_TYPE = "application/problem+json"
PROBLEM_TYPES = "/api/v1/problems/"  # the prefix of this API's own problem types


@cache
def _renderer() -> Any:
    """The API's renderer, imported on first use: this module is imported by every process
    (the accounts app's pages, the worker's use cases), and the renderer brings django-ninja
    (about 11 MB) that a Celery worker never needs."""
    # django-ninja loads on the first answer, never in the worker (see the docstring)
    from hisadmin.core.renderers import ORJSONRenderer

    return ORJSONRenderer()


def json_response(request: HttpRequest, body: Any, status: int = 200, *,
                  etag: str | None = None, location: str | None = None) -> HttpResponse:
    """``body`` rendered as JSON, with an ``ETag`` and a ``Location`` when given."""
    renderer = _renderer()
    response = HttpResponse(renderer.render(request, body, response_status=status),
                            status=status, content_type=renderer.media_type)
    if etag:
        response["ETag"] = etag
    if location:
        response["Location"] = location
    return response


def problem(request: HttpRequest, status: int, title: str, detail: str = "",
            **extra: Any) -> HttpResponse:
    """An RFC 9457 problem document; ``extra`` members (``errors``, ``code``…) are added.

    Every 409 carries ``conflicts`` (an empty list unless the caller gives them): the OpenAPI
    document marks it required on every 409, so a generated client can rely on it."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail or title,
            **extra}
    if status == 409:
        body.setdefault("conflicts", [])
    response = json_response(request, body, status)
    response["Content-Type"] = PROBLEM_TYPE
    return response


def problem_type(kind: str) -> str:
    """The ``type`` URI of a problem kind of this API (``/api/v1/problems/<kind>``)."""
    return f"{PROBLEM_TYPES}{kind}"


class PreconditionRequired(Exception):
    """An edit (PUT, PATCH) sent without ``If-Match``: answered 428 with a problem whose
    ``type`` is ``/api/v1/problems/precondition-required`` (the API assembly's handler)."""

    TYPE = "/api/v1/problems/precondition-required"


def require_if_match(if_match: str | None) -> str:
    """The version an edit of an existing resource is based on; raises
    ``PreconditionRequired`` when the client did not say (an edit is never applied blindly).
    Call it after the role check, so a caller who may not edit learns only that (403)."""
    version = (if_match or "").strip()
    if not version:
        raise PreconditionRequired("If-Match is required")
    return version
