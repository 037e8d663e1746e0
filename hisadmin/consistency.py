"""The middleware that puts a command's consistency token on its answer.

API answers carry it in ``X-Consistency-Token``; a page's command keeps it in the session too,
so the worklist page the user lands on (and its live refresh) waits for the change to show.
A command that waited for the views before it committed (admission control,
:mod:`hisadmin.core.views_lag`) says so in ``Server-Timing: admission;dur=<ms>``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from hisadmin.core import consistency, views_lag


class ConsistencyTokenMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        noted = consistency.begin()
        views_lag.begin_request()
        try:
            response = self.get_response(request)
        finally:
            token = consistency.end(noted)
        waited = views_lag.waited_in_request()
        if waited:
            timing = f'admission;dur={waited * 1000:.1f};desc="waited for the views"'
            present = response.get("Server-Timing")
            response["Server-Timing"] = f"{present}, {timing}" if present else timing
        if token:
            response[consistency.HEADER] = token
            session = getattr(request, "session", None)
            if session is not None and not request.path.startswith("/api/"):
                session[consistency.SESSION_KEY] = token
        return response
