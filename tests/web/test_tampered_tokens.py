"""No 5xx for a tampered or foreign token.

Page tokens (worklist ``page``/``continuation``, the audit trail's ``continuation`` and the
chart's "older" link, FHIR ``_cursor``) and consistency tokens are signed and bound to what
they page: a forged one, an altered one or one from another query is a 400 at once (a
problem document typed ``/api/v1/problems/bad-page-token`` or ``…/bad-consistency-token``
under /api, an OperationOutcome under /fhir, the 400 page on pages), and genuine ones still
page and still wait. The Host header, far MAR days and unknown API paths answer 4xx in the
caller's language too.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from hisadmin.core import consistency, tokens

pytestmark = pytest.mark.django_db
J = "application/json"
PROBLEM = "application/problem+json"
FHIR = "application/fhir+json"
BAD_PAGE = "/api/v1/problems/bad-page-token"
BAD_CONSISTENCY = "/api/v1/problems/bad-consistency-token"


def b64(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


# Random bytes, named in the test ids so that parallel workers collect the same tests.
RANDOM = base64.urlsafe_b64encode(os.urandom(48)).decode()
# What a client may send instead of a token it was given.
TAMPERED = (
    b64({"a": 1}),
    b64([1, 2, 3]),
    json.dumps([1, 2, 3]),
    str(2**63),
    "-1",
    b64([None, None]),
    "[null,null]",
    RANDOM,
    "x" * 1500,  # (past 2000 characters any API parameter is a 422)
    "%ff",
    "c1." + b64({"P_x": 1}),
)


def tampered_id(bad: object) -> str | None:
    return "random-48-bytes" if bad == RANDOM else None


WORKLISTS = ("admitted", "orders", "my-orders", "results-to-review")


def problem_400(r: Any, kind: str) -> None:
    assert r.status_code == 400, r.content[:300]
    assert r["Content-Type"].startswith(PROBLEM), r["Content-Type"]
    assert r.json()["type"] == kind, r.json()


@pytest.fixture
def ward(admit: Callable[..., str], drain_worklists: Callable[[], int]) -> list[str]:
    """Three patients admitted to MED-1, projected."""
    ids = [admit(name) for name in ("Tampa", "Tamsin", "Tamworth")]
    drain_worklists()
    return ids


# ------------------------------------------------------------------ worklists (API)
@pytest.mark.parametrize("bad", TAMPERED, ids=tampered_id)
@pytest.mark.parametrize("worklist", WORKLISTS)
def test_a_tampered_page_token_is_a_400_problem(team, worklist: str, bad: str) -> None:
    client = team["doc"]
    for extra in ({}, {"department": "MED"}):
        r = client.get(f"/api/v1/worklists/{worklist}", {"page": bad, **extra})
        problem_400(r, BAD_PAGE)


@pytest.mark.parametrize("bad", TAMPERED, ids=tampered_id)
def test_a_tampered_page_token_of_a_name_search_is_a_400_problem(team, bad: str) -> None:
    problem_400(team["clerk"].get("/api/v1/worklists/patients", {"q": "Tam", "page": bad}),
                BAD_PAGE)


def test_genuine_page_tokens_page_through_and_only_their_own_query(team, ward) -> None:
    client = team["clerk"]
    for extra in ({"department": "MED"}, {}):  # one bucket; every department merged
        seen: list[str] = []
        query = {"sort": "name", "page_size": 1, **extra}
        page = client.get("/api/v1/worklists/admitted", query).json()
        first_token = page["continuation"]
        while True:
            seen += [row["patient_id"] for row in page["items"]]
            if not page["continuation"]:
                break
            page = client.get("/api/v1/worklists/admitted",
                              {**query, "page": page["continuation"]}).json()
        assert sorted(seen) == sorted(ward) and len(seen) == 3
        # the same token with another order, filter or worklist: refused
        for other in ({**query, "dir": "desc"}, {**query, "q": "Tams"},
                      {**query, "ward": "MED-1"}):
            problem_400(client.get("/api/v1/worklists/admitted",
                                   {**other, "page": first_token}), BAD_PAGE)
        problem_400(team["doc"].get("/api/v1/worklists/orders",
                                    {**extra, "page": first_token}), BAD_PAGE)
    one = client.get("/api/v1/worklists/admitted", {"department": "MED", "page_size": 1})
    problem_400(client.get("/api/v1/worklists/admitted", {
        "page_size": 1, "page": one.json()["continuation"]}), BAD_PAGE)  # the merged list's


def test_a_page_token_of_one_users_list_is_refused_on_anothers() -> None:
    from worklists.read import queries

    mine, theirs = queries.my_orders("1"), queries.my_orders("2")
    token = tokens.sign_page("raw", scope=mine.scope())
    assert tokens.open_page(token, scope=mine.scope()) == "raw"
    with pytest.raises(tokens.BadPageToken):
        tokens.open_page(token, scope=theirs.scope())


# ------------------------------------------------------------------ audit trail
@pytest.fixture
def long_trail(team, ward) -> str:
    """The first patient of ``ward`` with 63 events (registered, admitted, no known
    allergies recorded, then 60 updates): more than one page of the trail."""
    pid = ward[0]
    for n in range(60):
        r = team["clerk"].get(f"/api/v1/patients/{pid}")
        r = team["clerk"].put(f"/api/v1/patients/{pid}", {
            "given_name": f"Ann{n}", "family_name": "Tampa", "birth_date": "1955-02-02",
            "sex": "female"}, content_type=J, HTTP_IF_MATCH=r["ETag"])
        assert r.status_code == 200, r.content
    return pid


def test_audit_event_tokens_page_and_are_bound_to_their_patient(team, ward, long_trail
                                                                 ) -> None:
    client = team["clerk"]
    page = client.get(f"/api/v1/patients/{long_trail}/events").json()
    total, genuine = len(page["items"]), []
    while page["continuation"]:
        genuine.append(page["continuation"])
        page = client.get(f"/api/v1/patients/{long_trail}/events",
                          {"continuation": page["continuation"]}).json()
        total += len(page["items"])
    assert total == 63 and genuine
    for bad in TAMPERED:
        problem_400(client.get(f"/api/v1/patients/{long_trail}/events",
                               {"continuation": bad}), BAD_PAGE)
    for token in genuine:  # another patient's trail
        problem_400(client.get(f"/api/v1/patients/{ward[1]}/events",
                               {"continuation": token}), BAD_PAGE)


# ------------------------------------------------------------------ pages
@pytest.fixture
def desk(make_user, reference_data) -> Client:
    client = Client()
    client.force_login(make_user("tamdesk", "clinician"))
    return client


PAGES = ("admitted", "orders", "my-orders", "results-to-review")


@pytest.mark.parametrize("bad", TAMPERED, ids=tampered_id)
def test_a_tampered_page_token_on_a_worklist_page_is_the_400_page(desk, bad: str) -> None:
    for page in PAGES:
        for extra in ({}, {"department": "MED"}, {"department": "all"}):
            r = desk.get(f"/admin/worklists/{page}/", {"page": bad, **extra})
            assert r.status_code == 400, (page, extra, r.status_code)
            assert "Bad request" in r.content.decode()
    r = desk.get("/admin/worklists/patients/", {"q": "Tam", "page": bad})
    assert r.status_code == 400


def test_a_worklist_page_takes_a_token_of_the_same_query_only(desk, team, ward) -> None:
    query = {"department": "MED", "sort": "name"}
    token = team["clerk"].get("/api/v1/worklists/admitted",
                              {**query, "page_size": 1}).json()["continuation"]
    assert token
    page = desk.get("/admin/worklists/admitted/", {**query, "page": token})
    assert page.status_code == 200
    assert "TAMPA" not in page.content.decode()  # the first row was the first page's
    assert desk.get("/admin/worklists/admitted/", {**query, "dir": "desc", "page": token}
                    ).status_code == 400


@pytest.mark.parametrize("bad", TAMPERED, ids=tampered_id)
def test_a_tampered_older_entries_link_on_the_chart_is_the_400_page(desk, ward, bad) -> None:
    r = desk.get(f"/admin/patients/{ward[0]}/", {"events": bad})
    assert r.status_code == 400
    assert "Bad request" in r.content.decode()


def test_the_charts_older_entries_link_is_bound_to_its_patient(desk, team, ward, long_trail
                                                                 ) -> None:
    pid, other = long_trail, ward[1]
    token = team["clerk"].get(f"/api/v1/patients/{pid}/events").json()["continuation"]
    assert token
    assert desk.get(f"/admin/patients/{pid}/", {"events": token}).status_code == 200
    assert desk.get(f"/admin/patients/{other}/", {"events": token}).status_code == 400


# ------------------------------------------------------------------ FHIR
def outcome_400(r: Any) -> None:
    assert r.status_code == 400, r.content[:300]
    assert r["Content-Type"] == FHIR
    assert r.json()["resourceType"] == "OperationOutcome"


@pytest.mark.parametrize("bad", TAMPERED, ids=tampered_id)
def test_a_tampered_fhir_cursor_is_a_400_operation_outcome(team, ward, bad: str) -> None:
    for search in ({"name": "Tampa"}, {"family": "Tam"},
                   {"birthdate": ["ge1950-01-01", "le1959-12-31"]}):
        outcome_400(team["clerk"].get("/fhir/R4/Patient", {**search, "_cursor": bad}))


def test_fhir_cursors_page_and_are_bound_to_their_search(team, ward) -> None:
    client = team["clerk"]
    for search in ({"family": "Tam"}, {"birthdate": ["ge1950-01-01", "le1959-12-31"]}):
        bundle = client.get("/fhir/R4/Patient", {**search, "_count": 1}).json()
        found = len(bundle.get("entry") or [])
        cursor = None
        while (nxt := next((x["url"] for x in bundle["link"] if x["relation"] == "next"),
                           None)):
            cursor = cursor or parse_qs(urlsplit(nxt).query)["_cursor"][0]
            bundle = client.get(nxt).json()
            found += len(bundle.get("entry") or [])
        assert found == 3, search
        assert cursor
        outcome_400(client.get("/fhir/R4/Patient", {"family": "Tams", "_cursor": cursor}))
        outcome_400(client.get("/fhir/R4/Patient", {
            "birthdate": ["ge1940-01-01", "le1949-12-31"], "_cursor": cursor}))


class Waited(AssertionError):
    """A read waited for the projections where it should have answered at once."""


@pytest.fixture
def never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """"At once" without a clock: the read's wait for a token is a loop that sleeps between
    looks at the projections; here its first sleep fails the request instead (on a loaded
    machine a timed bound fails for the wrong reason)."""
    from types import SimpleNamespace

    from worklists.read import consistency as waits

    def sleep(seconds: float) -> None:
        raise Waited(f"waited {seconds} s for the projections")

    monkeypatch.setattr(waits, "time", SimpleNamespace(monotonic=time.monotonic, sleep=sleep))


# ------------------------------------------------------------------ consistency tokens
@pytest.mark.parametrize("bad", (*TAMPERED, consistency.encode({"P_x": 1}) + "x"), ids=tampered_id)
def test_a_forged_consistency_token_is_a_400_at_once(team, bad: str, never_waits) -> None:
    for worklist in ("admitted", "patients?q=Tam", "medications-due?ward=MED-1"):
        r = team["doc"].get(f"/api/v1/worklists/{worklist}", HTTP_X_CONSISTENCY_TOKEN=bad)
        problem_400(r, BAD_CONSISTENCY)


def test_a_consistency_token_beyond_the_streams_head_is_a_400_at_once(
        team, ward, never_waits) -> None:
    for positions in ({f"P_{ward[0]}": 99}, {"P_nobody": 1}):
        r = team["clerk"].get("/api/v1/worklists/admitted",
                              HTTP_X_CONSISTENCY_TOKEN=consistency.encode(positions))
        problem_400(r, BAD_CONSISTENCY)


def test_read_your_writes_still_works_with_genuine_tokens(team, drain_worklists) -> None:
    r = team["clerk"].post("/api/v1/patients", {"given_name": "Ida", "family_name": "Tamara",
                                                "birth_date": "1960-06-06"}, content_type=J)
    token = r["X-Consistency-Token"]
    assert consistency.decode(token) == {f"P_{r.json()['id']}": 1}
    drain_worklists()
    page = team["clerk"].get("/api/v1/worklists/patients", {"q": "Tamara"},
                             HTTP_X_CONSISTENCY_TOKEN=token)
    assert page.status_code == 200
    assert [row["patient_id"] for row in page.json()["items"]] == [r.json()["id"]]


def test_tokens_are_signed_with_a_salt_per_kind() -> None:
    page = tokens.sign_page("7", scope="s")
    assert tokens.open_page(page, scope="s") == "7"
    for wrong in (lambda: tokens.open_page(page, scope="t"),
                  lambda: tokens.open_positions(page),
                  lambda: tokens.open_page(tokens.sign_positions({"P_x": 1}), scope="s")):
        with pytest.raises((tokens.BadPageToken, tokens.BadConsistencyToken)):
            wrong()


def test_a_forged_consistency_token_in_the_session_is_ignored_by_pages(
        desk, never_waits) -> None:
    session = desk.session
    session[consistency.SESSION_KEY] = b64({"P_x": 99})
    session.save()
    assert desk.get("/admin/worklists/admitted/").status_code == 200


def test_the_openapi_lists_the_400_where_tokens_are_taken(team) -> None:
    doc = team["clerk"].get("/api/v1/openapi.json").json()
    for path in ("/api/v1/worklists/admitted", "/api/v1/worklists/patients",
                 "/api/v1/worklists/medications-due", "/api/v1/patients/{patient_id}/events"):
        assert "400" in doc["paths"][path]["get"]["responses"], path


# ------------------------------------------------------------------ host, MAR days, paths
@pytest.mark.parametrize("debug", (False, True))
def test_a_host_outside_allowed_hosts_is_a_400(settings, debug: bool) -> None:
    settings.DEBUG = debug
    client = Client(HTTP_HOST="evil.example", raise_request_exception=False)
    for path, kind in (("/admin/", "text/html"), ("/api/v1/patients", PROBLEM),
                       ("/api/v1/", PROBLEM), ("/fhir/R4/Patient", FHIR), ("/", "text/html")):
        r = client.get(path)
        assert r.status_code == 400, (path, r.status_code)
        if not debug:
            assert r["Content-Type"].startswith(kind), (path, r["Content-Type"])


@pytest.mark.parametrize("day", ("0001-01-01", "9999-12-31", "2026-02-30", "tomorrow"))
def test_a_far_or_malformed_mar_day_is_a_400(team, desk, ward, day: str) -> None:
    r = team["nurse"].get(f"/api/v1/patients/{ward[0]}/mar", {"date": day})
    problem_400(r, "/api/v1/problems/bad-day")
    assert desk.get(f"/admin/patients/{ward[0]}/mar/", {"date": day}).status_code == 400


@pytest.mark.parametrize("path", ("/api/v1/", "/api/v1/nonexistent", "/api/v1/worklists/nope",
                                  "/api/"))
def test_an_unknown_api_path_is_a_json_404(team, path: str) -> None:
    r = team["clerk"].get(path)
    assert r.status_code == 404 and r["Content-Type"].startswith(PROBLEM)
    assert r.json()["status"] == 404


def test_a_crash_under_the_api_is_a_500_problem(rf) -> None:
    from hisadmin import errors

    for path, kind in (("/api/v1/patients", PROBLEM), ("/fhir/R4/Patient", FHIR)):
        r = errors.server_error(rf.get(path))
        assert r.status_code == 500 and r["Content-Type"].startswith(kind)
        json.loads(r.content)


def test_no_more_than_max_waiting_requests_wait_at_once(team, monkeypatch, never_waits) -> None:
    import threading

    from worklists.read import consistency as waits

    r = team["clerk"].post("/api/v1/patients", {"given_name": "Wes", "family_name": "Waiting",
                                                "birth_date": "1960-06-06"}, content_type=J)
    token = r["X-Consistency-Token"]  # not projected: a read with it would wait
    full = threading.BoundedSemaphore(1)
    full.acquire()  # every waiting place taken
    monkeypatch.setattr(waits, "_waiting", full)
    late = team["clerk"].get("/api/v1/worklists/patients", {"q": "Waiting"},
                             HTTP_X_CONSISTENCY_TOKEN=token)
    assert late.status_code == 503 and late["Retry-After"] == "1"
