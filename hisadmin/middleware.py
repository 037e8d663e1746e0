"""The pages' last line of defence against bad input: errors that mean "this request was
malformed or names nothing" become the 400 and 404 pages, never a 500.

A malformed page token, sort key or filter reaches the store as ``InvalidRequest``; an id
that names no document as ``NotFound``. Pages should catch these themselves (and most do,
with a message on the field); this catches the rest. The API maps the same errors to
problem documents in ``hisadmin/api.py`` and is left alone here.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject, empty

from cosmos_backend import errors as store_errors
from hisadmin import errors

MALFORMED = (
    "A link or form sent something this page cannot read (a page token, a sort "
    "order or a filter). Open the page again from the menu."
)


class PageErrorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if request.path.startswith("/api/"):
            return None
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
