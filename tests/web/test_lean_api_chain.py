"""The two middleware chains, through the real WSGI application (``TwoChainHandler``) called
with built environs: a bearer-token API call without a session cookie takes the token
chain and still gets its security headers, access audit, consistency token and problem
documents; a call with the session cookie takes the full chain and is CSRF-checked."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, override_settings

from hisadmin.core import access_log
from hisadmin.middleware import CachedCSPMiddleware, TwoChainHandler
from hisadmin.models import ApiToken
from operations.models import AccessRecord
from tests.web.keep_connection import keeping_the_tests_connection

pytestmark = pytest.mark.django_db
SECURITY_HEADERS = ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
                    "Referrer-Policy", "Cross-Origin-Opener-Policy")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    chain: str

    def json(self) -> Any:
        return json.loads(self.body)


@pytest.fixture
def app() -> TwoChainHandler:
    return TwoChainHandler()


@pytest.fixture
def call(app: TwoChainHandler, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Answer]:
    """``call(method, path, body=None, **environ)`` → the answer and which chain served it."""
    served: list[str] = []
    for name, handler in (("token", app.token_chain), ("full", app)):
        def noting(request: Any, _real: Any = handler.get_response, _name: str = name) -> Any:
            served.append(_name)
            return _real(request)
        monkeypatch.setattr(handler, "get_response", noting)

    def call(method: str, path: str, body: dict[str, Any] | None = None, **extra: str
             ) -> Answer:
        raw = json.dumps(body).encode() if body is not None else b""
        path, _, query = path.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
            "REMOTE_ADDR": "10.9.8.7", "wsgi.input": io.BytesIO(raw),
            "CONTENT_LENGTH": str(len(raw)), "CONTENT_TYPE": "application/json", **extra}
        setup_testing_defaults(environ)
        environ["HTTP_HOST"] = "testserver"
        started: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> None:
            started.update(status=int(status.split()[0]), headers=dict(headers))

        served.clear()
        with keeping_the_tests_connection():
            response = app(environ, start_response)
            content = b"".join(response)
            response.close()  # what a server does: request_finished
        return Answer(started["status"], started["headers"], content, served[-1])

    return call


@pytest.fixture
def bearer(make_user: Callable[..., User]) -> Callable[[str], str]:
    def bearer(*roles: str) -> str:
        _, raw = ApiToken.issue(make_user("lean-" + "-".join(roles), *roles), "tests")
        return f"Bearer {raw}"

    return bearer


@pytest.fixture
def patient_id(team: dict[str, Client], admit: Callable[..., str]) -> str:
    pid = admit("Leanchain", given="Lea")
    AccessRecord.objects.all().delete()
    return pid


def session_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


@pytest.mark.parametrize(("environ", "token_only"), [
    ({"PATH_INFO": "/api/v1/worklists/admitted", "HTTP_AUTHORIZATION": "Bearer his_x"}, True),
    ({"PATH_INFO": "/api/v1/patients", "HTTP_AUTHORIZATION": "bearer his_x",
      "HTTP_COOKIE": "csrftoken=abc"}, True),
    ({"PATH_INFO": "/api/v1/patients", "HTTP_AUTHORIZATION": "Bearer his_x",
      "HTTP_COOKIE": "csrftoken=abc; sessionid=xyz"}, False),
    ({"PATH_INFO": "/api/v1/patients"}, False),
    ({"PATH_INFO": "/api/v1/patients", "HTTP_AUTHORIZATION": "Basic eDp5"}, False),
    ({"PATH_INFO": "/fhir/R4/Patient", "HTTP_AUTHORIZATION": "Bearer his_x"}, False),
    ({"PATH_INFO": "/admin/", "HTTP_AUTHORIZATION": "Bearer his_x"}, False),
])
def test_it_takes_the_token_chain_only_for_bearer_api_calls_without_a_session(
        app: TwoChainHandler, environ: dict[str, str], token_only: bool) -> None:
    assert app.token_only(environ) is token_only


def test_a_token_read_takes_the_token_chain_with_every_security_header(
        call: Callable[..., Answer], bearer: Callable[[str], str], reference_data: None) -> None:
    token = call("GET", "/api/v1/worklists/admitted?department=MED",
                 HTTP_AUTHORIZATION=bearer("clinician"))
    assert (token.status, token.chain) == (200, "token")
    assert token.json()["items"] == []
    page = call("GET", "/admin/login/")
    assert page.chain == "full"
    for header in SECURITY_HEADERS:
        assert token.headers[header] == page.headers[header], header
    assert token.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in token.headers["Content-Security-Policy"]
    assert token.headers["Content-Length"] == str(len(token.body))
    assert "Set-Cookie" not in token.headers


def test_a_token_read_of_a_record_is_audited(call: Callable[..., Answer],
                                             bearer: Callable[[str], str],
                                             patient_id: str) -> None:
    answer = call("GET", f"/api/v1/patients/{patient_id}", HTTP_AUTHORIZATION=bearer("nurse"))
    assert (answer.status, answer.chain) == (200, "token")
    access_log.flush()
    record = AccessRecord.objects.get(patient_id=patient_id)
    assert (record.username, record.part, record.channel, record.client) == (
        "lean-nurse", "Record", "api", "10.9.8.7")


def test_a_token_command_gets_its_consistency_token(call: Callable[..., Answer],
                                                    bearer: Callable[[str], str],
                                                    reference_data: None) -> None:
    answer = call("POST", "/api/v1/patients", {
        "given_name": "Ida", "family_name": "Leanwrite", "birth_date": "1970-03-04"},
        HTTP_AUTHORIZATION=bearer("clerk"))
    assert (answer.status, answer.chain) == (201, "token"), answer.body
    assert answer.headers["X-Consistency-Token"]


@pytest.mark.parametrize(("path", "status"), [("/api/v1/no-such-thing", 404),
                                              ("/api/v1/patients/nobody-here", 404),
                                              ("/api/v1/worklists/admitted?page_size=0", 400)])
def test_token_chain_errors_are_problem_documents(call: Callable[..., Answer],
                                                  bearer: Callable[[str], str],
                                                  reference_data: None, path: str,
                                                  status: int) -> None:
    answer = call("GET", path, HTTP_AUTHORIZATION=bearer("clinician"))
    assert (answer.status, answer.chain) == (status, "token")
    assert answer.headers["Content-Type"].startswith("application/problem+json")
    assert answer.json()["status"] == status


def test_an_unknown_or_revoked_token_is_a_401_not_an_error(call: Callable[..., Answer],
                                                          bearer: Callable[[str], str]) -> None:
    unknown = call("GET", "/api/v1/worklists/admitted", HTTP_AUTHORIZATION="Bearer his_nope")
    assert (unknown.status, unknown.chain) == (401, "token")
    assert unknown.json()["title"] == "Authentication required"
    header = bearer("clinician")
    ApiToken.objects.update(revoked=True)
    revoked = call("GET", "/api/v1/worklists/admitted", HTTP_AUTHORIZATION=header)
    assert (revoked.status, revoked.chain) == (401, "token")


def test_the_api_docs_open_with_a_token(call: Callable[..., Answer],
                                        bearer: Callable[[str], str]) -> None:
    answer = call("GET", "/api/v1/docs", HTTP_AUTHORIZATION=bearer("clinician"))
    assert (answer.status, answer.chain) == (200, "token")
    assert b"swagger" in answer.body.lower()


def test_a_session_call_takes_the_full_chain_and_is_csrf_checked(
        call: Callable[..., Answer], make_user: Callable[..., User],
        reference_data: None) -> None:
    cookie = session_cookie(make_user("lean-session-clerk", "clerk"))
    read = call("GET", "/api/v1/worklists/admitted?department=MED", HTTP_COOKIE=cookie)
    assert (read.status, read.chain) == (200, "full")
    write = call("POST", "/api/v1/patients", {
        "given_name": "Ida", "family_name": "Forged", "birth_date": "1970-03-04"},
        HTTP_COOKIE=cookie)
    assert (write.status, write.chain) == (403, "full")
    assert "CSRF" in write.body.decode()


def test_a_bearer_call_with_a_session_cookie_takes_the_full_chain(
        call: Callable[..., Answer], make_user: Callable[..., User],
        bearer: Callable[[str], str], reference_data: None) -> None:
    cookie = session_cookie(make_user("lean-both", "clerk"))
    answer = call("GET", "/api/v1/worklists/admitted?department=MED", HTTP_COOKIE=cookie,
                  HTTP_AUTHORIZATION=bearer("clinician"))
    assert (answer.status, answer.chain) == (200, "full")


def test_the_policy_built_once_follows_a_changed_setting_and_per_response_changes(
        call: Callable[..., Answer], bearer: Callable[[str], str], rf: Any) -> None:
    header = bearer("clinician")
    with override_settings(CONTENT_SECURITY_POLICY={"DIRECTIVES": {"default-src": ["'none'"]}}):
        changed = call("GET", "/api/v1/no-such-thing", HTTP_AUTHORIZATION=header)
        assert changed.headers["Content-Security-Policy"] == "default-src 'none'"
    back = call("GET", "/api/v1/no-such-thing", HTTP_AUTHORIZATION=header)
    assert "frame-ancestors 'none'" in back.headers["Content-Security-Policy"]

    middleware = CachedCSPMiddleware(lambda request: HttpResponse())
    response = HttpResponse()
    response._csp_update = {"img-src": ["https://images.example"]}  # type: ignore[attr-defined]
    request = rf.get("/")
    middleware.process_request(request)
    updated = middleware.process_response(request, response)
    assert "img-src 'self' data: https://images.example" in updated["Content-Security-Policy"]
