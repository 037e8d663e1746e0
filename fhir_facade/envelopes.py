"""What wraps resources on the wire: searchset Bundles, OperationOutcomes, the media type."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import HttpResponse
from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.operationoutcome import OperationOutcome
from fhir.resources.R4B.resource import Resource

MEDIA_TYPE = "application/fhir+json"


class FhirError(Exception):
    """An answer other than 200, as an OperationOutcome: ``status`` is the HTTP status,
    ``code`` the FHIR issue type (invalid, not-found, login, forbidden, too-costly…)."""

    def __init__(self, status: int, code: str, diagnostics: str) -> None:
        super().__init__(diagnostics)
        self.status, self.code, self.diagnostics = status, code, diagnostics


def outcome(code: str, diagnostics: str, severity: str = "error") -> OperationOutcome:
    return OperationOutcome(
        issue=[{"severity": severity, "code": code, "diagnostics": diagnostics}]
    )


def respond(resource: Resource, status: int = 200) -> HttpResponse:
    """The resource as FHIR JSON (the model's own serialisation)."""
    return HttpResponse(resource.model_dump_json(), status=status, content_type=MEDIA_TYPE)


def error_response(error: FhirError) -> HttpResponse:
    return respond(outcome(error.code, error.diagnostics), error.status)


@dataclass
class Page:
    """One page of a search: its resources, the total over all pages, and the query
    strings of the neighbouring pages (None: no such page)."""

    resources: list[Resource]
    total: int
    next_query: str | None = None
    previous_query: str | None = None
    notes: list[str] = field(default_factory=list)  # parameters ignored, said in an outcome


def searchset(page: Page, *, base: str, resource_type: str, self_query: str) -> Bundle:
    """A searchset Bundle: ``total``, ``self`` / ``next`` / ``previous`` links (absolute),
    each entry with its full URL and search mode ``match``."""
    url = f"{base}/{resource_type}"
    links = [{"relation": "self", "url": f"{url}?{self_query}" if self_query else url}]
    if page.next_query is not None:
        links.append({"relation": "next", "url": f"{url}?{page.next_query}"})
    if page.previous_query is not None:
        links.append({"relation": "previous", "url": f"{url}?{page.previous_query}"})
    entries = [
        {
            "fullUrl": f"{base}/{r.get_resource_type()}/{r.id}",
            "resource": r,
            "search": {"mode": "match"},
        }
        for r in page.resources
    ]
    if page.notes:
        entries.append(
            {
                "resource": outcome("not-supported", " ".join(page.notes), "warning"),
                "search": {"mode": "outcome"},
            }
        )
    return Bundle(type="searchset", total=page.total, link=links, entry=entries or None)
