"""Idle sessions end: a ward computer left logged in must not stay open to the next person.

A browser session with no activity for ``IDLE_TIMEOUT_SECONDS`` is logged out at its next
request. Activity is any request the user caused; a request carrying ``X-Idle-Passive``
(the worklists' and bed boards' own refreshes, tagged by ``hisadmin/idle.js``) and the
status poll of that script do not count. The script warns ``IDLE_WARNING_SECONDS`` before
the end, and "Stay signed in" posts to :func:`session_status`, which counts as activity.
Bearer-token requests have no session and are not concerned.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

LAST_ACTIVE = "his_last_active"  # session key: when the user last did something (epoch s)
PASSIVE_HEADER = "X-Idle-Passive"
# The stamp is rewritten at most this often, so a busy user costs one session write a
# minute, not one per request.
STAMP_EVERY_SECONDS = 30
SIGNED_OUT = "You were signed out after {duration} without activity. Log in again."
# On the login page's address when an idle session ended: the page says why from it. (A
# one-time message in the new session was taken by whichever login page rendered first:
# the list's own refresh and the warning script both go there when the session ends, and
# the browser showed the second, without it.)
SIGNED_OUT_QUERY = {"signed_out": "idle"}
# Answered in JSON (or left to the API's own 401) rather than redirected to the login page.
NO_REDIRECT_PREFIXES = ("/api/", "/fhir/")


def idle_context(request: HttpRequest) -> dict[str, Any]:
    """Template context: what the warning script needs (only for a logged-in session; a
    bearer-token call that renders a page, the API docs, has none)."""
    if getattr(request, "session", None) is None or not request.user.is_authenticated:
        if all(request.GET.get(k) == v for k, v in SIGNED_OUT_QUERY.items()):
            return {"idle_signed_out": SIGNED_OUT.format(duration=_duration())}
        return {}
    return {
        # where the script sends the page when the session has ended (it adds "next")
        "idle_login": f"{reverse(settings.LOGIN_URL)}?{urlencode(SIGNED_OUT_QUERY)}",
        "idle_remaining": _remaining(request),
        "idle_timeout": settings.IDLE_TIMEOUT_SECONDS,
        "idle_warning": settings.IDLE_WARNING_SECONDS,
    }


def _remaining(request: HttpRequest) -> int:
    """Seconds left, counted from the stamp the server keeps (which may be up to
    ``STAMP_EVERY_SECONDS`` old), so the page and the server agree on the end."""
    last = float(request.session.get(LAST_ACTIVE, time.time()))
    return max(0, round(last + settings.IDLE_TIMEOUT_SECONDS - time.time()))


def _duration() -> str:
    seconds = settings.IDLE_TIMEOUT_SECONDS
    return f"{round(seconds / 60)} minutes" if seconds >= 120 else f"{seconds} seconds"


def _stamp_every() -> float:
    # A thirtieth of the timeout at most, so a short timeout (a test's) stays exact enough.
    return min(STAMP_EVERY_SECONDS, settings.IDLE_TIMEOUT_SECONDS / 30)


def _passive(request: HttpRequest) -> bool:
    return bool(request.headers.get(PASSIVE_HEADER)) or (
        request.method == "GET" and request.path == reverse("his_session")
    )


def _signed_out_response(request: HttpRequest) -> HttpResponse | None:
    """Where a request of a session that just ended goes: the login page, coming back to
    the page the user was on; ``None`` lets it go on as an anonymous request."""
    if request.path.startswith(NO_REDIRECT_PREFIXES) or request.path == reverse("his_session"):
        return None
    login = reverse(settings.LOGIN_URL)
    if request.headers.get("HX-Request"):
        # An htmx swap would put the login form inside the page: send the whole page there.
        current = urlsplit(request.headers.get("HX-Current-URL", ""))
        back = current.path + (f"?{current.query}" if current.query else "") or "/"
        response = HttpResponse(status=204)
        response["HX-Redirect"] = f"{login}?{urlencode({'next': back, **SIGNED_OUT_QUERY})}"
        return response
    return HttpResponseRedirect(
        f"{login}?{urlencode({'next': request.get_full_path(), **SIGNED_OUT_QUERY})}")


class IdleSessionMiddleware:
    """Ends a session idle longer than ``IDLE_TIMEOUT_SECONDS``; stamps activity."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            now = time.time()
            last = request.session.get(LAST_ACTIVE)
            if last is not None and now - float(last) > settings.IDLE_TIMEOUT_SECONDS:
                logout(request)  # flushes the session: nothing of it survives
                response = _signed_out_response(request)
                if response is not None:
                    return response
            elif last is None or (not _passive(request) and now - float(last) >= _stamp_every()):
                request.session[LAST_ACTIVE] = now
        return self.get_response(request)


@never_cache
@require_http_methods(["GET", "POST"])
def session_status(request: HttpRequest) -> JsonResponse:
    """``GET``: how many seconds this session has left (does not count as activity), so a
    tab learns of activity in another. ``POST`` ("Stay signed in"): counts as activity."""
    if not request.user.is_authenticated:
        return JsonResponse({"signed_in": False, "remaining": 0})
    if request.method == "POST":
        request.session[LAST_ACTIVE] = time.time()
    return JsonResponse(
        {"signed_in": True, "remaining": _remaining(request)}
    )
