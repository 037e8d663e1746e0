"""The site's own middleware, and the WSGI handler that picks a middleware chain.

``PageErrorsMiddleware`` is the pages' last line of defence against bad input: errors that
mean "this request was malformed or names nothing" become the 400 and 404 pages, never a
500. A malformed page token, sort key or filter reaches the store as ``InvalidRequest``; an
id that names no document as ``NotFound``. Pages should catch these themselves (and most
do, with a message on the field); this catches the rest. The API maps the same errors to
problem documents in ``hisadmin/api.py`` and is left alone here.

``RequestLineLimitMiddleware``, first in both chains, answers a path and query string over
``errors.MAX_REQUEST_URI`` bytes with a 414 in the caller's language before anything reads
it further.

``TwoChainHandler`` serves an API call that carries a bearer token and no session cookie
through ``settings.API_TOKEN_MIDDLEWARE``, a shorter chain: such a call has no session, so
sessions, CSRF, messages, idle sessions, htmx and the login lockout have nothing to do for
it (a forged cross-site request cannot add an ``Authorization`` header). Every other
request, a browser's API call with its session cookie too, takes ``settings.MIDDLEWARE``.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.core.exceptions import BadRequest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import setting_changed
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.functional import SimpleLazyObject, empty

from cosmos_backend import errors as store_errors
from hisadmin import errors
from hisadmin.core.tokens import BadPageToken

MALFORMED = (
    "A link or form sent something this page cannot read (a page token, a sort "
    "order or a filter). Open the page again from the menu."
)
BAD_PAGE_TOKEN = (
    "This page link was made for another list (other filters or order) or was altered, so "
    "it cannot be followed. Open the page again from the menu."
)


class PageErrorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if request.path.startswith("/api/"):
            return None
        if isinstance(exc, BadPageToken):
            return errors.bad_request(request, BadRequest(BAD_PAGE_TOKEN))
        if isinstance(exc, store_errors.InvalidRequest):
            return errors.bad_request(request, BadRequest(MALFORMED))
        if isinstance(exc, store_errors.NotFound):
            return errors.page_not_found(request, Http404("No such record."))
        return None


class LazyMessageMiddleware(MessageMiddleware):
    """Django's messages, with the storage made on first use: an API call that never shows
    or adds a message (nearly all of them) skips reading and signing the messages cookie.
    A request that did not touch its messages has nothing to save: the same as Django's."""

    def process_request(self, request: HttpRequest) -> None:
        request._messages = SimpleLazyObject(lambda: default_storage(request))  # type: ignore[attr-defined]

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response
        return super().process_response(request, response)


# ---------------------------------------------------------------- the content security policy
_PER_RESPONSE_POLICY = ("_csp_config", "_csp_update", "_csp_replace",
                        "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro")


@cache
def _site_policies() -> tuple[str, str]:
    """The site's policy and report-only policy as header values, without a nonce."""
    return build_policy(), build_policy(report_only=True)


def _forget_policies(*, setting: str, **_: Any) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _site_policies.cache_clear()


setting_changed.connect(_forget_policies, dispatch_uid="his-csp-policies")


class CachedCSPMiddleware(CSPMiddleware):
    """django-csp's middleware with the site's policy built once, not on every response
    (it was ~7 % of an API read's time). A response that changes the policy (the
    ``csp_update``/``csp_replace``/``csp`` decorators) or a request that used a nonce gets
    django-csp's own per-response policy."""

    def process_response(self, request: HttpRequest, response: HttpResponseBase
                         ) -> HttpResponseBase:
        if getattr(request, "_csp_nonce", None) is not None or any(
                getattr(response, name, None) is not None for name in _PER_RESPONSE_POLICY):
            return super().process_response(request, response)
        if settings.DEBUG and response.status_code in (http.client.INTERNAL_SERVER_ERROR,
                                                       http.client.NOT_FOUND):
            return response  # django-csp leaves Django's debug pages alone
        policy, report_only = _site_policies()
        for header, value, exempt, setting in (
                (HEADER, policy, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
                (HEADER_REPORT_ONLY, report_only, "_csp_exempt_ro",
                 "CONTENT_SECURITY_POLICY_REPORT_ONLY")):
            if not value or header in response or getattr(response, exempt, False):
                continue
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES")
            if not prefixes or not request.path_info.startswith(tuple(prefixes)):
                response[header] = value
        request.csp_nonce = SimpleLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response


# ---------------------------------------------------------------- bearer-token API calls
class TokenUserMiddleware:
    """The token chain's stand-in for sessions and ``AuthenticationMiddleware``: the user is
    anonymous until the API's token authenticator sets the token's user."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.user = AnonymousUser()
        return self.get_response(request)


class RequestLineLimitMiddleware:
    """A path and query string longer than :data:`hisadmin.errors.MAX_REQUEST_URI` bytes is
    a 414: problem JSON under /api/, an OperationOutcome under /fhir/, the error page
    elsewhere. Measured on the line as sent (gunicorn's ``RAW_URI``), else as Django
    rebuilds it (percent-encoded)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raw = request.META.get("RAW_URI") or request.get_full_path()
        length = len(raw.encode("utf-8", "surrogateescape"))
        if length > errors.MAX_REQUEST_URI:
            return errors.uri_too_long(request, length)
        return self.get_response(request)


class _Chain(WSGIHandler):
    """A WSGI handler over its own middleware list."""

    def __init__(self, middleware: Iterable[str]) -> None:
        self.middleware = list(middleware)
        super().__init__()

    def load_middleware(self, is_async: bool = False) -> None:
        # Django builds a chain from settings.MIDDLEWARE only: it gets this list for that
        # moment, once, while the process starts and before it serves a request.
        site = settings.MIDDLEWARE
        settings.MIDDLEWARE = self.middleware
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = site


class TwoChainHandler(WSGIHandler):
    """Django's WSGI handler (``settings.MIDDLEWARE``), with a second chain
    (``settings.API_TOKEN_MIDDLEWARE``) for the API calls :meth:`token_only` picks."""

    API_PREFIX = "/api/"

    def __init__(self) -> None:
        super().__init__()
        self.token_chain = _Chain(settings.API_TOKEN_MIDDLEWARE)
        self.session_cookie = settings.SESSION_COOKIE_NAME

    def token_only(self, environ: dict[str, Any]) -> bool:
        """An API call with a bearer token and no session cookie. (A cookie header that
        merely mentions the session cookie's name takes the full chain: the safe side.)"""
        return (environ.get("PATH_INFO", "").startswith(self.API_PREFIX)
                and environ.get("HTTP_AUTHORIZATION", "")[:7].lower() == "bearer "
                and self.session_cookie not in environ.get("HTTP_COOKIE", ""))

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if self.token_only(environ):
            return self.token_chain(environ, start_response)
        return super().__call__(environ, start_response)
