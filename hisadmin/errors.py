"""Error pages in the admin's look (``handler400`` … ``handler500`` in :mod:`hisadmin.urls`).

Each says what happened in words and offers the way back (home, finding a patient, the page
the user came from). 400, 403 and 404 pages carry the admin's header and sidebar; the 500 page
renders without touching the database or the session, which may be what failed.

Under ``/api/`` and ``/fhir/`` the same handlers answer in the caller's language instead: an
RFC 9457 problem document (``application/problem+json``) for the JSON API, an
OperationOutcome (``application/fhir+json``) for the FHIR facade, never an HTML page; this
covers what Django answers before any view runs (a ``Host`` outside ``ALLOWED_HOSTS`` is a
400) and a crash (the 500).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import orjson
from django.contrib import admin
from django.core.exceptions import BadRequest, DisallowedHost, PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from hisadmin.core import policy
from hisadmin.core.problems import problem, problem_type

log = logging.getLogger(__name__)

PAGES: dict[int, tuple[str, str]] = {
    400: (
        "Bad request",
        "The address or the form sent to this page was not understood. "
        "Go back and try again, or start from the home page.",
    ),
    403: ("Not allowed", "Your role does not allow this page or this action."),
    404: ("Page not found", "There is no such page, or the record it names does not exist."),
    414: ("Address too long", "The address of this page is longer than the server reads "
          "(4,096 characters). Open the page again from the menu, or narrow what you search."),
    500: (
        "Something went wrong",
        "The server could not finish this request. Try again in "
        "a moment; if it happens again, tell the service desk what "
        "you were doing.",
    ),
}


API_PREFIX = "/api/"
FHIR_PREFIX = "/fhir/"
FHIR_MEDIA_TYPE = "application/fhir+json"
# FHIR's issue type for each status these handlers answer.
FHIR_CODES = {400: "invalid", 403: "forbidden", 404: "not-found", 414: "too-long",
              500: "exception"}
# The API's own titles (hisadmin.api), not the pages' words.
MACHINE_TITLES = {400: "Bad request", 403: "Forbidden", 404: "Not found", 500: "Server error"}
BAD_HOST = "The Host header names no site served here."
# The longest path and query string read, in bytes: far more than any page or filter of the
# API needs. Gunicorn reads request lines up to 8,190 bytes (the launcher's
# --limit-request-line) so that everything between is answered here, in the caller's
# language, and only a line past gunicorn's own limit gets its plain 414.
MAX_REQUEST_URI = 4096
CSRF_EXPIRED = (
    "This form had expired, so nothing was saved. Go back, reload the page and submit it again."
)


def _reason(exception: Exception | None) -> str:
    """The exception's own words, when they are meant for users: the policy's ("This needs
    the clerk role."), a page's Http404 or BadRequest. Never the URL resolver's internals or
    a SuspiciousOperation's details."""
    if not isinstance(exception, PermissionDenied | Http404 | BadRequest):
        return ""
    message = exception.args[0] if exception.args else ""
    return message if isinstance(message, str) else ""


def _back_url(request: HttpRequest) -> str:
    """The referring page, if it is one of ours (same host): never a link off the site."""
    referer = request.headers.get("Referer", "")
    parts = urlsplit(referer)
    if not referer or parts.netloc != request.get_host() or referer.endswith(request.path):
        return ""
    return referer


def _machine_answer(request: HttpRequest, status: int,
                    exception: Exception | None) -> HttpResponse | None:
    """The error as a problem document (under /api/) or an OperationOutcome (under /fhir/);
    None for a page. Built from the path alone: nothing here may fail again."""
    path = getattr(request, "path", "") or ""
    if not path.startswith((API_PREFIX, FHIR_PREFIX)):
        return None
    title, explanation = MACHINE_TITLES[status], PAGES[status][1]
    if isinstance(exception, DisallowedHost):
        detail = BAD_HOST
    elif status == 404:
        detail = f"No endpoint {path[:200]!r}."
    else:
        detail = _reason(exception) or explanation
    if path.startswith(API_PREFIX):
        return problem(request, status, title, detail)
    body = {"resourceType": "OperationOutcome", "issue": [
        {"severity": "error", "code": FHIR_CODES[status], "diagnostics": detail}]}
    return HttpResponse(orjson.dumps(body), status=status, content_type=FHIR_MEDIA_TYPE)


def _plain(status: int, reason: str = "") -> HttpResponse:
    """The error page without the request's context (no user, session or host needed)."""
    title, explanation = PAGES[status]
    context = {"title": title, "explanation": explanation, "status": status,
               "reason": reason, "site_header": admin.site.site_header,
               "site_title": admin.site.site_title}
    return HttpResponse(render_to_string("admin/error.html", context), status=status)


def _page(request: HttpRequest, status: int, exception: Exception | None) -> HttpResponse:
    answer = _machine_answer(request, status, exception)
    if answer is not None:
        return answer
    if isinstance(exception, DisallowedHost):
        # Refused before the middleware ran: no user, no session, and the host unusable.
        return _plain(status, BAD_HOST)
    title, explanation = PAGES[status]
    context: dict[str, Any] = {
        "title": title,
        "explanation": explanation,
        "status": status,
        "reason": _reason(exception),
    }
    try:
        context.update(admin.site.each_context(request))
        context["can_find"] = policy.allows(request.user, "read")
        context["back_url"] = _back_url(request)
        if status == 400 and request.method == "GET" and request.GET:
            context["fresh_url"] = request.path  # the same page without what it could not read
    except Exception:  # noqa: BLE001 - the error page itself must not fail: plain chrome
        log.warning("error page %s rendered without navigation", status, exc_info=True)
    try:
        return render(request, "admin/error.html", context, status=status)
    except Exception:  # noqa: BLE001 - nor its context processors (a request half made)
        log.warning("error page %s rendered without the request", status, exc_info=True)
        return _plain(status, context["reason"])


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _page(request, 400, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _page(request, 403, exception)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: a form sent without its valid token (usually a page left open
    across a logout or a long pause) is a 403 page that says what to do."""
    return _page(request, 403, PermissionDenied(CSRF_EXPIRED))


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _page(request, 404, exception)


def uri_too_long(request: HttpRequest, length: int) -> HttpResponse:
    """The 414 for a path and query string of ``length`` bytes (over
    :data:`MAX_REQUEST_URI`): a problem (type ``…/uri-too-long``, with ``max_length``) under
    /api/, an OperationOutcome (``too-long``) under /fhir/, else the plain error page (the
    request has been read no further: no session, no user)."""
    path = request.path
    detail = (f"The request's path and query string are {length:,} bytes long; at most "
              f"{MAX_REQUEST_URI:,} are read. Send fewer or shorter query parameters.")
    if path.startswith(API_PREFIX):
        return problem(request, 414, "URI too long", detail, type=problem_type("uri-too-long"),
                       max_length=MAX_REQUEST_URI)
    if path.startswith(FHIR_PREFIX):
        body = {"resourceType": "OperationOutcome", "issue": [
            {"severity": "error", "code": FHIR_CODES[414], "diagnostics": detail}]}
        return HttpResponse(orjson.dumps(body), status=414, content_type=FHIR_MEDIA_TYPE)
    return _plain(414)


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500: JSON under /api/ and /fhir/, else the page without the database or session."""
    answer = _machine_answer(request, 500, None)
    return answer if answer is not None else _plain(500)
