"""The facade's URLs, mounted by the shell at ``fhir/R4/`` with the API's token lookup:
``path("fhir/R4/", include(fhir_urls(bearer=TokenAuth().authenticate)))``.

The views (and with them the FHIR models, ~11 MB a process) are loaded on the first FHIR
request, so a web process that never serves one does not carry them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, re_path
from django.views.decorators.csrf import csrf_exempt

if TYPE_CHECKING:
    from fhir_facade.views import Bearer, FhirViews

APP_NAME = "fhir"


class _OnFirstRequest:
    """:class:`~fhir_facade.views.FhirViews`, made when a view is first called."""

    def __init__(self, bearer: Bearer) -> None:
        self.bearer = bearer
        self._views: FhirViews | None = None
        self._lock = threading.Lock()

    def views(self) -> FhirViews:
        with self._lock:
            if self._views is None:
                # Imported on the first FHIR request: the FHIR models are ~11 MB a process.
                from fhir_facade.views import FhirViews
                self._views = FhirViews(self.bearer)
            return self._views

    def view(self, name: str) -> Callable[..., HttpResponse]:
        @csrf_exempt  # reads only, as every facade view: anything but GET is a 405
        def call(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            response: HttpResponse = getattr(self.views(), name)(request, *args, **kwargs)
            return response

        call.__name__ = name
        return call


def fhir_urls(*, bearer: Bearer) -> tuple[list[URLPattern], str]:
    """The URL patterns and their namespace, for ``include``."""
    views = _OnFirstRequest(bearer)
    patterns = [
        path("metadata", views.view("metadata"), name="metadata"),
        path("<str:resource_type>", views.view("search"), name="search"),
        path("<str:resource_type>/<str:resource_id>", views.view("read"), name="read"),
        path("Patient/<str:resource_id>/$everything", views.view("everything"),
             name="everything"),
        re_path(r"^(?P<rest>.*)$", views.view("unknown")),  # FHIR JSON, never the HTML 404
    ]
    return patterns, APP_NAME
