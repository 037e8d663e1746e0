"""``Cache-Control: no-store`` on every answer that may hold patient data.

The rule is deliberately broad, so no answer naming a patient is ever left out: every
response under ``/api/`` and ``/fhir/`` (JSON API, FHIR facade, their errors and docs), and
every page answered to a logged-in user. Shared ward computers and proxies must not keep
copies of a record. Static files (answered by WhiteNoise before this middleware) and the
pages of anonymous visitors (the login page) keep their own caching.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import patch_cache_control

PREFIXES = ("/api/", "/fhir/")


def holds_patient_data(request: HttpRequest) -> bool:
    """True for an API or FHIR request, or any request of a logged-in user."""
    if request.path.startswith(PREFIXES):
        return True
    if settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return False  # no session, no login: and the session is not loaded for nothing
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


class NoStoreMiddleware:
    """Adds ``no-store`` to the answers :func:`holds_patient_data` picks (kept beside any
    directive a view set, e.g. Django's ``never_cache``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if holds_patient_data(request):
            if response.has_header("Cache-Control"):
                patch_cache_control(response, no_store=True)
            else:
                response["Cache-Control"] = "no-store"
        return response
