"""The versioned JSON API: one NinjaAPI assembling the apps' routers, errors mapped in one place.

Every endpoint needs a bearer token (``Authorization: Bearer his_…``) or a browser session
(with CSRF); neither is a 401 with ``WWW-Authenticate: Bearer``. Errors are RFC 9457 problem
documents. Every write (POST, PUT, PATCH, DELETE) takes an ``Idempotency-Key``
(:func:`idempotent`, applied here to every operation, not per endpoint).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, URLResolver
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.docs import Swagger
from ninja.security import APIKeyCookie, HttpBearer

from cosmos_backend import errors as store_errors
from cosmos_backend.envelope import etag
from cosmos_backend.uow import StaleWrite
from hisadmin.core import parameters
from hisadmin.core.cache import ExpiringCache
from hisadmin.core.idempotency import HEADER as IDEMPOTENCY_KEY
from hisadmin.core.idempotency import with_idempotency
from hisadmin.core.parameters import BadParameter
from hisadmin.core.problems import PreconditionRequired, problem, problem_type
from hisadmin.core.renderers import ORJSONRenderer
from hisadmin.core.roles import roles_of
from hisadmin.core.store import get_store
from hisadmin.core.tokens import BadConsistencyToken, BadPageToken
from hisadmin.models import ApiToken, hash_token
from hisadmin.openapi import complete as complete_openapi
from patients.api.clinical import router as clinical_router
from patients.api.records import router as patients_router
from patients.domain.errors import DomainError, PatientMerged
from worklists.api import router as worklists_router


@dataclass
class _TokenLookup:
    user: Any
    token_pk: int
    last_used: datetime | None  # updated in place, so the entry keeps its expiry


class TokenAuth(HttpBearer):
    """Bearer tokens, looked up by hash. A lookup is remembered for ``CACHE_SECONDS`` per
    process, so polling clients cost no database query per request; revoking a token or
    deactivating its user therefore takes effect within that time. Unknown tokens and
    inactive users are never remembered."""

    CACHE_SECONDS = 5.0
    LAST_USED_EVERY_SECONDS = 60  # at most one write per token and minute
    _cache: ExpiringCache[_TokenLookup] = ExpiringCache(CACHE_SECONDS)  # by token hash

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        digest = hash_token(token)
        hit = self._cache.peek(digest)
        if hit is None:
            hit = self._lookup(digest)
            if hit is None:
                return None
            self._cache.put(digest, hit)
        wall = timezone.now()
        last = hit.last_used
        if last is None or (wall - last).total_seconds() > self.LAST_USED_EVERY_SECONDS:
            ApiToken.objects.filter(pk=hit.token_pk).update(last_used=wall)
            hit.last_used = wall
        user = copy.copy(hit.user)  # requests must not share one mutable user object
        request.user = user
        return user

    @staticmethod
    def _lookup(digest: str) -> _TokenLookup | None:
        try:
            record = ApiToken.objects.select_related("user").get(key_hash=digest, revoked=False)
        except ApiToken.DoesNotExist:
            return None
        if not record.user.is_active:
            return None
        roles_of(record.user)  # resolved once per cache period, not per request
        return _TokenLookup(record.user, record.pk, record.last_used)

    @classmethod
    def forget(cls, **_: Any) -> None:
        cls._cache.forget()


# A token revoked or a user changed in this process is forgotten at once (others: ≤ 5 s).
post_save.connect(TokenAuth.forget, sender=ApiToken, dispatch_uid="his-token-save")
post_delete.connect(TokenAuth.forget, sender=ApiToken, dispatch_uid="his-token-delete")
post_save.connect(TokenAuth.forget, sender=settings.AUTH_USER_MODEL, dispatch_uid="his-user-save")
m2m_changed.connect(TokenAuth.forget, sender=get_user_model().groups.through,
                    dispatch_uid="his-groups-changed")  # roles are cached with the user


class SessionAuth(APIKeyCookie):
    """The browser's session cookie; ninja enforces CSRF for cookie auth. A request without
    the cookie is not a session's: it skips the CSRF check, so a client that sent no (or a
    bad) token is told 401, not "CSRF check failed"."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        if self.param_name not in request.COOKIES:
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_active:
            return user
        return None


CHALLENGE = 'Bearer realm="api"'  # RFC 6750: what a 401 asks for
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def idempotent(run: Any) -> Any:
    """A ninja "view" decorator: a write operation's answer kept for its ``Idempotency-Key``
    (``hisadmin.core.idempotency``). Keys are per user, so the caller is authenticated (and
    refused) first; then the operation runs as ninja runs it, its answer (a domain error's
    problem too) being what a retry gets back. Reads, and writes without a key, run as
    they are."""
    operation = getattr(run, "__self__", None)
    if operation is None or not WRITES & set(operation.methods):
        return run

    @wraps(run)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in WRITES or not request.headers.get(IDEMPOTENCY_KEY):
            return run(request, *args, **kwargs)
        refused = operation._run_checks(request)  # sets request.user for a token's caller
        if refused is not None:
            return refused
        return with_idempotency(request, lambda: run(request, *args, **kwargs), problem)

    return guarded


def docs_access(view: Any) -> Any:
    """The schema and docs need a login too: a session, or a bearer token for tools."""
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("bearer ") and TokenAuth().authenticate(
            request, header[7:].strip()
        ):
            return view(request, *args, **kwargs)
        if request.user.is_authenticated and request.user.is_active:
            return view(request, *args, **kwargs)
        if request.path.endswith(".json"):
            response = HttpResponse('{"title": "Authentication required", "status": 401}',
                                    status=401, content_type="application/problem+json")
            response["WWW-Authenticate"] = CHALLENGE
            return response
        return redirect_to_login(request.get_full_path())

    return wrapped


def _method_not_allowed(view: Any) -> Any:
    """A path's view whose 405 (a method the path does not take) is a problem document,
    keeping the ``Allow`` header."""
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if response.status_code != 405 or response.get("Content-Type", "").endswith("json"):
            return response
        answer = problem(request, 405, "Method not allowed",
                         f"{request.method} is not allowed here; allowed: {response['Allow']}.")
        answer["Allow"] = response["Allow"]
        return answer

    return wrapped


class HisApi(NinjaAPI):
    """The NinjaAPI whose OpenAPI document lists every answer (``hisadmin.openapi``) and
    whose 405s are problem documents."""

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        return complete_openapi(super().get_openapi_schema(**kwargs))

    def _get_urls(self) -> list[URLPattern | URLResolver]:
        urls = super()._get_urls()
        for pattern in urls:
            if isinstance(pattern, URLPattern):
                pattern.callback = _method_not_allowed(pattern.callback)
        return urls


@csrf_exempt  # nothing is changed: a POST to a path that does not exist is a 404 too
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Any path under /api that is not an endpoint: a problem document, never the HTML page."""
    return problem(request, 404, "Not found", f"No endpoint {request.path[:200]!r}; the "
                   "endpoints are listed in /api/v1/openapi.json.")


class OfflineSwagger(Swagger):
    """The docs page from the Swagger UI files this app serves. (django-ninja renders those
    only when ``ninja`` is an installed app, and from a CDN otherwise; installing it loads
    ninja and pydantic into every process, the Celery worker's too, ~15 MB there. The
    templates and static files are on the settings' search paths instead.)"""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        return render(request, self.template, {
            "swagger_settings": json.dumps(self.settings, indent=1), "api": api,
            "add_csrf": True})


api = HisApi(
    title="Hospital back office API",
    docs=OfflineSwagger(),
    docs_decorator=docs_access,
    version="1",
    urls_namespace="api-v1",
    auth=[TokenAuth(), SessionAuth()],
    renderer=ORJSONRenderer(),
    description="Patients, admissions, orders and worklists. Token auth: "
    "`Authorization: Bearer <token>` (issue one with `manage.py create_api_token`).",
)


# pydantic's error types of a query parameter taking a closed set or range of values (an
# enumeration, a boolean, a number): a list's sort, direction, filter or page size.
CLOSED = ("literal_error", "enum", "bool_", "int_", "float_", "greater_than", "less_than")


def _bad_query_parameter(request: HttpRequest, exc: NinjaValidationError
                         ) -> BadParameter | None:
    """A query parameter the operation could not read, as :class:`BadParameter` (the
    values an enumeration takes, from pydantic's error), or None when none is at fault. Only
    a read's parameters: a command's (a DELETE's ``reason``) are its input, a 422 naming the
    field as a body's are."""
    if request.method not in ("GET", "HEAD"):
        return None
    for err in exc.errors:
        loc = [str(p) for p in err.get("loc", ())]
        if not loc or loc[0] != "query" or not str(err.get("type", "")).startswith(CLOSED):
            continue  # a body, or text a person typed (control characters…): 422
        name = loc[-1] if len(loc) > 1 else "query"
        value = request.GET.get(name, "")
        expected = str((err.get("ctx") or {}).get("expected", ""))
        allowed = re.findall(r"'([^']*)'", expected)
        if err.get("type") == "bool_parsing":
            allowed = ["true", "false"]
        if allowed:
            return BadParameter(name, value, allowed)
        message = str(err.get("msg", "invalid value")).rstrip(".")
        return BadParameter(name, value, detail=f"{name}: {message}.")
    return None


@api.exception_handler(BadParameter)
def _bad_parameter(request: HttpRequest, exc: BadParameter) -> HttpResponse:
    """A list's sort, direction or filter value it does not offer (hisadmin.core.parameters)."""
    return problem(request, 400, parameters.TITLE, str(exc), type=parameters.PROBLEM_TYPE,
                   parameter=exc.parameter, allowed=exc.allowed,
                   errors=[{"field": exc.parameter, "message": str(exc)}])


@api.exception_handler(NinjaValidationError)
def _validation(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    """A body that does not validate: 422 with each field; a query parameter: 400."""
    if (bad := _bad_query_parameter(request, exc)) is not None:
        return _bad_parameter(request, bad)
    fields = []
    for err in exc.errors:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "payload", "query", "path", "header")]
        fields.append({"field": ".".join(loc), "message": err.get("msg", "invalid value")})
    return problem(request, 422, "Validation failed",
                   "; ".join(f"{f['field']}: {f['message']}" for f in fields), errors=fields)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = problem(request, 401, "Authentication required",
                       "Send 'Authorization: Bearer <token>' or log in.",
                       type=problem_type("unauthenticated"))
    response["WWW-Authenticate"] = CHALLENGE
    return response


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return problem(request, 403, "Forbidden", str(exc) or "Your role does not allow this.")


@api.exception_handler(StaleWrite)
def _stale(request: HttpRequest, exc: StaleWrite) -> HttpResponse:
    current = get_store().try_read(exc.pk, exc.doc_id)
    response = problem(request, 412, "Changed by someone else meanwhile",
                       "The record changed since you read it. Fetch it again (GET), review the "
                       "current values and resend with the new ETag in If-Match.",
                       type=problem_type("precondition-failed"),
                       current_etag=etag(current) if current else None)
    if current is not None:
        response["ETag"] = etag(current)
    return response


@api.exception_handler(store_errors.NotFound)
def _not_found(request: HttpRequest, exc: store_errors.NotFound) -> HttpResponse:
    return problem(request, 404, "Not found", "No such record.")


@api.exception_handler(store_errors.InvalidRequest)
def _invalid(request: HttpRequest, exc: store_errors.InvalidRequest) -> HttpResponse:
    return problem(request, 400, "Bad request", str(exc))


@api.exception_handler(BadPageToken)
@api.exception_handler(BadConsistencyToken)
def _bad_token(request: HttpRequest, exc: BadPageToken | BadConsistencyToken) -> HttpResponse:
    """A page or consistency token this system did not issue (for this query): 400, typed."""
    return problem(request, 400, exc.TITLE, str(exc), type=exc.TYPE)


@api.exception_handler(store_errors.Throttled)
@api.exception_handler(store_errors.Unavailable)
def _unavailable(request: HttpRequest, exc: store_errors.StoreError) -> HttpResponse:
    response = problem(request, 503, "Store busy", "The document store is busy; retry shortly.")
    response["Retry-After"] = "1"
    return response


@api.exception_handler(PreconditionRequired)
def _precondition_required(request: HttpRequest, exc: PreconditionRequired) -> HttpResponse:
    """Every PUT and PATCH calls ``require_if_match`` after its role check."""
    return problem(request, 428, "Precondition required",
                   "Send the ETag of the version you edit in If-Match (GET it first); an edit "
                   "is never applied blindly.", type=PreconditionRequired.TYPE)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return problem(request, exc.status_code, str(exc.message), str(exc.message))


@api.exception_handler(DomainError)
def _domain(request: HttpRequest, exc: DomainError) -> HttpResponse:
    """Each domain error class carries its HTTP status, title and (maybe) the field at fault,
    a problem type and more members (``conflicts`` of a refused order)."""
    extra: dict[str, Any] = dict(getattr(exc, "extra", {}))
    if exc.field:
        extra["errors"] = [{"field": exc.field, "message": str(exc)}]
    if exc.problem_type:
        extra["type"] = f"/api/v1/problems/{exc.problem_type}"
    response = problem(request, exc.http_status, exc.title, str(exc),
                       code=type(exc).__name__, **extra)
    if isinstance(exc, PatientMerged):  # the record merged into: where to go instead
        response["Location"] = f"/api/v1/patients/{exc.survivor_id}"
    return response


api.add_decorator(idempotent, mode="view")
api.add_router("/", "patients.api.duplicates.router")  # before the record's /patients/{id}
api.add_router("/", patients_router)
api.add_router("/", "patients.api.merges.router")  # /patients/{id}/merge, …/merges/…/undo
api.add_router("/", "patients.api.results.router")  # before clinical: its …/{action}
api.add_router("/", clinical_router)
api.add_router("/", "patients.api.mar.router")
api.add_router("/worklists", worklists_router)
api.add_router("/reference", "patients.api.reference.router")
api.add_router("/wards", "worklists.census_api.router")  # /census: a view, not a ward code
api.add_router("/wards", "patients.api.wards.router")
api.add_router("/wards", "patients.api.assignments.router")  # /{code}/assignments
api.add_router("/", "patients.api.handovers.router")  # /patients/{id}/handovers
api.add_router("/", "patients.api.observations.router")  # /patients/{id}/observations
api.add_router("/", "webhooks.api.router")  # /subscriptions, /webhooks/dead-letters
api.add_router("/hl7", "hl7v2.outbound.api.router")  # destinations, messages, replay
