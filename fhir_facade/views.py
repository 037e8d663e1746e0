"""HTTP: read (``GET [base]/<Type>/<id>``), search (``GET [base]/<Type>?…``), ``metadata``
and ``Patient/<id>/$everything``.

Authentication is the JSON API's: a bearer token (checked by the authenticator the shell
hands in, the API's own token lookup) or a logged-in session; none → 401, a role that may
not read the record → 403 (the policy's ``read`` action, as in the JSON API). Every answer,
errors included, is FHIR JSON: an OperationOutcome with the status (400 for a malformed
parameter, 404 for an unknown id or type, 405 for anything but GET), never an HTML page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from cosmos_backend import errors as store_errors
from fhir_facade import capability, reads, searches
from fhir_facade.envelopes import FhirError, error_response, respond, searchset
from fhir_facade.everything import everything as whole_record
from fhir_facade.params import parse
from hisadmin.core import access_log, policy
from hisadmin.core.access_log import Access, Channel
from hisadmin.core.store import get_store
from patients.domain.errors import DomainError

Bearer = Callable[[HttpRequest, str], Any]  # (request, token) → the user, or None
READABLE = ("Patient", *searches.PATIENT_TYPES)
READ_METHODS = ("GET", "HEAD")


def patient_of(resource: Any) -> str | None:
    """The id of the patient a resource is about: a Patient's own, else its subject's or
    patient's reference (``Patient/<id>``)."""
    if resource.get_resource_type() == "Patient":
        return str(resource.id)
    for name in ("subject", "patient"):
        reference = getattr(getattr(resource, name, None), "reference", None) or ""
        if reference.startswith("Patient/"):
            return reference.removeprefix("Patient/")
    return None


def base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("fhir:metadata")).removesuffix("/metadata")


class FhirViews:
    """The facade's views, with the bearer-token authenticator they accept."""

    def __init__(self, bearer: Bearer) -> None:
        self.bearer = bearer

    # ---------------------------------------------------------------- the views
    @csrf_exempt  # reads only: anything but GET is a 405 before any work
    def metadata(self, request: HttpRequest) -> HttpResponse:
        """Public, as FHIR clients fetch it before they authenticate; it holds no record."""
        return self._answer(
            request,
            lambda: respond(capability.capability_statement(base_url(request))),
            public=True,
        )

    @csrf_exempt
    def search(self, request: HttpRequest, resource_type: str) -> HttpResponse:
        def run() -> HttpResponse:
            self._known(resource_type)
            strict = "handling=strict" in request.headers.get("Prefer", "").replace(" ", "")
            asked = parse(request.GET, searches.params_of(resource_type), strict=strict)
            page = searches.search(get_store(), resource_type, asked)
            self._audit(request, f"FHIR {resource_type} search", page.resources)
            if asked.ignored:
                page.notes.append(f"Ignored parameters: {', '.join(asked.ignored)}.")
            self_query = asked.query(
                _count=asked.count if "_count" in request.GET else None,
                _offset=asked.offset or None,
                _cursor=asked.cursor,
            )
            return respond(
                searchset(
                    page, base=base_url(request), resource_type=resource_type, self_query=self_query
                )
            )

        return self._answer(request, run)

    @csrf_exempt
    def read(self, request: HttpRequest, resource_type: str, resource_id: str) -> HttpResponse:
        def run() -> HttpResponse:
            self._known(resource_type)
            resource = reads.read(get_store(), resource_type, resource_id)
            self._audit(request, f"FHIR {resource_type}", [resource])
            return respond(resource)

        return self._answer(request, run)

    @csrf_exempt
    def everything(self, request: HttpRequest, resource_id: str) -> HttpResponse:
        """``GET Patient/{id}/$everything``: the patient's whole record and audit trail as
        one searchset Bundle (:mod:`fhir_facade.everything`, as ``export_patient`` writes)."""

        def run() -> HttpResponse:
            bundle = whole_record(get_store(), resource_id, base=base_url(request))
            self._audit(request, "FHIR Patient $everything", [resource_id])
            return respond(bundle)

        return self._answer(request, run)

    @csrf_exempt
    def unknown(self, request: HttpRequest, rest: str = "") -> HttpResponse:
        def run() -> HttpResponse:
            raise FhirError(404, "not-found", "No such FHIR endpoint here; see metadata.")

        return self._answer(request, run)

    # ---------------------------------------------------------------- the mechanics
    @staticmethod
    def _known(resource_type: str) -> None:
        if resource_type not in READABLE:
            raise FhirError(
                404, "not-supported", f"{resource_type[:40]} is not served here; see metadata."
            )

    @staticmethod
    def _audit(request: HttpRequest, part: str, resources: list[Any]) -> None:
        """Who read which patients' resources (queued: ``hisadmin.core.access_log``);
        ``resources`` are resources or patient ids."""
        user = request.fhir_user  # type: ignore[attr-defined]  # set by _authorize
        client = str(request.META.get("REMOTE_ADDR", ""))[:45]
        ids = {r if isinstance(r, str) else patient_of(r) for r in resources}
        for patient_id in sorted(p for p in ids if p):
            access_log.record(Access(
                at=timezone.now(), patient_id=patient_id, part=part, channel=Channel.FHIR,
                user_id=user.pk, username=user.get_username(), client=client))

    def _authorize(self, request: HttpRequest) -> None:
        header = request.headers.get("Authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            user = (
                self.bearer(request, token.strip())
                if scheme.lower() == "bearer" and token.strip()
                else None
            )
            if user is None:
                raise FhirError(401, "login", "The bearer token is not valid.")
        elif request.user.is_authenticated and request.user.is_active:
            user = request.user
        else:
            raise FhirError(401, "login", "Send 'Authorization: Bearer <token>' or log in.")
        if not policy.allows(user, "read"):
            raise FhirError(
                403,
                "forbidden",
                "Reading the clinical record needs the clerk, clinician or nurse role.",
            )
        request.fhir_user = user  # type: ignore[attr-defined]  # for the access audit

    def _answer(
        self, request: HttpRequest, run: Callable[[], HttpResponse], *, public: bool = False
    ) -> HttpResponse:
        try:
            if not public:
                self._authorize(request)
            if request.method not in READ_METHODS:
                raise FhirError(405, "not-supported", "This FHIR server only reads: use GET.")
            response = run()
        except FhirError as exc:
            response = error_response(exc)
        except DomainError as exc:
            code = "not-found" if exc.http_status == 404 else "invalid"
            response = error_response(FhirError(exc.http_status, code, str(exc)))
        except store_errors.InvalidRequest as exc:
            response = error_response(FhirError(400, "invalid", str(exc)))
        except (store_errors.Throttled, store_errors.Unavailable):
            response = error_response(
                FhirError(503, "transient", "The document store is busy; retry shortly.")
            )
            response["Retry-After"] = "1"
        if response.status_code == 401:
            response["WWW-Authenticate"] = 'Bearer realm="fhir"'
        if response.status_code == 405:
            response["Allow"] = ", ".join(READ_METHODS)
        if not public:
            response["Cache-Control"] = "no-store"  # patient data: never kept by caches
        return response
