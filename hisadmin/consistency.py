"""The middleware that puts a command's consistency token on its answer.

API answers carry it in ``X-Consistency-Token``; a page's command keeps it in the session too,
so the worklist page the user lands on (and its live refresh) waits for the change to show.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from hisadmin.core import consistency


class ConsistencyTokenMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        noted = consistency.begin()
        try:
            response = self.get_response(request)
        finally:
            token = consistency.end(noted)
        if token:
            response[consistency.HEADER] = token
            session = getattr(request, "session", None)
            if session is not None and not request.path.startswith("/api/"):
                session[consistency.SESSION_KEY] = token
        return response
