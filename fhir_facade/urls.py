"""The facade's URLs, mounted by the shell at ``fhir/R4/`` with the API's token lookup:
``path("fhir/R4/", include(fhir_urls(bearer=TokenAuth().authenticate)))``."""

from __future__ import annotations

from django.urls import URLPattern, path, re_path

from fhir_facade.views import Bearer, FhirViews

APP_NAME = "fhir"


def fhir_urls(*, bearer: Bearer) -> tuple[list[URLPattern], str]:
    """The URL patterns and their namespace, for ``include``."""
    views = FhirViews(bearer)
    patterns = [
        path("metadata", views.metadata, name="metadata"),
        path("<str:resource_type>", views.search, name="search"),
        path("<str:resource_type>/<str:resource_id>", views.read, name="read"),
        path("Patient/<str:resource_id>/$everything", views.everything, name="everything"),
        re_path(r"^(?P<rest>.*)$", views.unknown),  # FHIR JSON, never the HTML 404 page
    ]
    return patterns, APP_NAME
