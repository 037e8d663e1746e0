"""Every page each role can reach, with malformed query parameters and unknown ids: never a
5xx.

For each role the crawler starts from the home page and its menu, follows every link within
/admin/, and adds each registered page pattern filled with real ids (a patient with an
admission, a medication, a lab and an imaging order, an allergy) and with unknown or mangled
ids. Each page is fetched plain, and one page of each route and kind with malformed
parameters (page tokens, sort keys, filters, search text); each form page also gets a POST
of garbage.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Callable, Iterator
from urllib.parse import urlencode, urljoin, urlsplit

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve

pytestmark = pytest.mark.django_db
J = "application/json"
ROLES = ("clerk", "clinician", "nurse", "admin", "superuser")  # the demo admin is a superuser
LIMIT = 300  # pages per role: the crawl stops there (sort and filter links multiply)
MAX_CHILDREN = 10  # pages followed under one parent path (reference entries, users, …)

MALFORMED_QUERIES: tuple[dict[str, str], ...] = (
    {"page": "x"},
    {"page": "eyJub3QiOiAiYSB0b2tlbiJ9"},  # base64 of JSON that is not a page token
    {"page": "%ff%fe", "events": "%ff"},
    {"sort": "no_such_column", "dir": "sideways"},
    {"sort": "__class__", "dir": "desc"},
    {"events": "garbage"},
    {"events": "eyJ4IjogMX0="},
    {"department": "NOPE", "ward": "NOPE", "kind": "x", "status": "x", "urgency": "x"},
    {"department": "", "ward": "MED-1"},
    {"q": "\x00"},
    {"q": "x" * 500},
    {"q": "%", "o": "-1", "p": "-1", "all": "", "e": "1"},
    {"date": "not-a-date", "day": "2026-13-45", "at": "yesterday"},
    {"mrn": "'; DROP TABLE", "id": "../..", "patient": "nope"},
)
UNKNOWN_IDS = ("nope", "0", "..", "%2e%2e", "x" * 300, "P-00000000-0000", "ÿ")
GARBAGE_FORM = {
    "etag": "nope",
    "action": "fly",
    "reason": "x" * 2000,
    "dose": "lots",
    "unit": "??",
    "disposition": "moon",
    "ward_id": "NOPE",
    "bed": "Z",
    "given_name": "",
    "birth_date": "31/31/31",
    "status": "x",
    "at": "x",
    "page": "x",
    "q": "\x00",
}
HREF = re.compile(r'href="([^"#]*)"')
FORM_ACTION = re.compile(r'<form[^>]*\saction="([^"#]+)"')
# Parameters whose values only reorder or page the same rows: one value of each is enough.
SAME_ROWS = {"sort", "dir", "page", "events", "o", "p", "_changelist_filters"}
SKIP = ("/admin/logout/", "/admin/password_change/", "/admin/jsi18n/")
DJANGO_MODEL_PAGES = ("/admin/auth/", "/admin/hisadmin/")


@pytest.fixture
def demo_world(
    team: dict[str, Client], admit: Callable[..., str], drain_worklists: Callable[[], int]
) -> dict[str, str]:
    """A patient admitted with orders of each kind, an allergy and a handover note; one
    never admitted."""
    pid = admit("Crawl")
    doc, nurse = team["doc"], team["nurse"]
    orders = {}
    for body in (
        {
            "kind": "medication",
            "medication_code": "PARA",
            "dose": "1",
            "unit": "g",
            "route": "PO",
            "frequency": "Q8H",
        },
        {"kind": "lab", "test_code": "CBC"},
        {"kind": "imaging", "modality": "CR", "body_part": "CHEST"},
    ):
        r = doc.post(f"/api/v1/patients/{pid}/orders", body, content_type=J)
        assert r.status_code == 201, r.content
        orders[body["kind"]] = r.json()["order_id"]
    nurse.post(f"/api/v1/patients/{pid}/orders/{orders['medication']}/ready", {}, content_type=J)
    allergy = doc.post(
        f"/api/v1/patients/{pid}/allergies",
        {"substance": "Latex", "severity": "mild"},
        content_type=J,
    ).json()["allergies"][0]["allergy_id"]
    other = (
        team["clerk"]
        .post(
            "/api/v1/patients",
            {"given_name": "Never", "family_name": "Admitted", "birth_date": "1990-01-01"},
            content_type=J,
        )
        .json()["id"]
    )
    handover = nurse.post(
        f"/api/v1/patients/{pid}/handovers",
        {"situation": "Stable", "background": "Day 2", "assessment": "Improving",
         "recommendation": "Continue"},
        content_type=J,
    )
    assert handover.status_code == 201, handover.content
    observation = nurse.post(
        f"/api/v1/patients/{pid}/observations",
        {"respiration_rate": 24, "spo2": 93, "on_oxygen": False, "systolic_bp": 105,
         "diastolic_bp": 60, "pulse": 112, "consciousness": "A", "temperature": 38.3},
        content_type=J,
    )
    assert observation.status_code == 201, observation.content
    drain_worklists()  # the worklists list them (and link to their charts)
    return {"patient_id": pid, "other_patient": other, "allergy_id": allergy,
            "handover": handover.json()["id"],
            "observation": observation.json()["observation_id"], **orders}


def _admin_routes() -> list[str]:
    """Every route under /admin/, with its parameters as ``<name>`` placeholders."""
    found: list[str] = []

    def walk(patterns: list, prefix: str) -> None:
        for p in patterns:
            route = str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + route)
            elif isinstance(p, URLPattern):
                found.append(prefix + route)

    walk(get_resolver().url_patterns, "/")
    return [
        r
        for r in found
        if r.startswith("/admin/")
        and not r.startswith("/admin/^")
        and "(?P" not in r
        and not r.endswith("$")
    ]


def _fill(route: str, values: dict[str, str]) -> str | None:
    names = re.findall(r"<(?:\w+:)?(\w+)>", route)
    if any(n not in values for n in names):
        return None
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[m.group(1)], route)


def registered_urls(w: dict[str, str]) -> Iterator[str]:
    """Each registered page pattern with real ids, and with each id unknown in turn."""
    real = {
        "patient_id": w["patient_id"],
        "order_id": w["medication"],
        "allergy_id": w["allergy_id"],
        "kind": "medication",
        "type_name": "Ward",
        "code": "MED-1",
        "ward_id": "MED-1",
        "bed": "M101",
        "handover_id": w["handover"],  # POST only: a GET goes back to the chart
        "observation_id": w["observation"],
        "subscription_id": "no-such-subscription",  # a webhook's pages answer 404, not 500
        "destination_id": "no-such-destination",  # an HL7 destination's pages: 404, not 500
        "pair_id": "no-such-pair",  # a possible duplicate pair no longer listed: 404, not 500
    }
    variants = [
        real,
        {**real, "order_id": w["lab"]},
        {**real, "order_id": w["imaging"]},
        {**real, "kind": "lab"},
        {**real, "kind": "imaging"},
        {**real, "patient_id": w["other_patient"]},
        {**real, "type_name": "Medication", "code": "PARA"},
    ]
    for name in real:
        variants += [{**real, name: bad} for bad in UNKNOWN_IDS]
    for route in _admin_routes():
        for values in variants:
            url = _fill(route, values)
            if url is not None:
                yield url


def links(html: str, base: str) -> Iterator[str]:
    """The page's links within /admin/, relative ones ("?page=…") resolved against it."""
    for href in HREF.findall(html):
        url = urljoin(base, href.replace("&amp;", "&"))
        if url.startswith("/admin/"):
            yield url


def _key(url: str) -> tuple[str, tuple[str, ...]]:
    """Pages differing only in sort order or page count once; each filter value counts."""
    parts = urlsplit(url)
    params = sorted(
        k if k.split("=", 1)[0] not in SAME_ROWS else k.split("=", 1)[0]
        for k in parts.query.split("&")
        if k
    )
    return parts.path, tuple(params)


def crawl(
    client: Client, start: list[str], limit: int = LIMIT
) -> tuple[dict[str, int], list[str], dict[str, str]]:
    """Breadth-first over /admin/ links from ``start``: {url: status}, the form pages, and
    every link or form target shown on a page → the first page showing it."""
    seen: dict[tuple[str, tuple[str, ...]], str] = {}
    statuses: dict[str, int] = {}
    forms: list[str] = []
    shown: dict[str, str] = {}
    queue = deque((url, True) for url in start)
    children: Counter[str] = Counter()  # followed links per parent path
    while queue and len(statuses) < limit:
        url, seeded = queue.popleft()
        if url.startswith(SKIP) or _key(url) in seen:
            continue
        parent = urlsplit(url).path.rstrip("/").rsplit("/", 1)[0]
        if not seeded and children[parent] >= MAX_CHILDREN:
            continue  # the 200 entries of one reference list are one kind of page
        children[parent] += 1
        seen[_key(url)] = url
        response = client.get(url)
        statuses[url] = response.status_code
        if response.status_code == 200 and "text/html" in response.get("Content-Type", ""):
            html = response.content.decode()
            if 'method="post"' in html:
                forms.append(url)
            found = [
                *links(html, url),
                *(urljoin(url, a.replace("&amp;", "&")) for a in FORM_ACTION.findall(html)),
            ]
            for link in found:
                shown.setdefault(link, url)
            queue.extend((link, False) for link in found)
    return statuses, forms, shown


def refused(client: Client, statuses: dict[str, int], shown: dict[str, str]) -> list[str]:
    """Links and buttons a page shows that lead to a 403: actions the role may not take."""
    found = []
    children: Counter[str] = Counter()  # links asked per parent path, as the crawl follows
    for target, page in shown.items():
        if not target.startswith("/admin/") or target.startswith(SKIP):
            continue
        status = statuses.get(target)
        if status is None:
            parent = urlsplit(target).path.rstrip("/").rsplit("/", 1)[0]
            children[parent] += 1
            if children[parent] > MAX_CHILDREN:
                continue  # the 200 entries of one list are one kind of link
            status = client.get(target).status_code
        if status == 403:
            found.append(f"{page} shows {target}")
    return found


# URL parameters that choose a kind of page (a reference type, an order kind, a chart
# section): pages of one route differing in these are different pages; in ids, the same.
KIND_KWARGS = ("type_name", "kind", "section")


def one_per_route(paths: set[str] | list[str]) -> list[str]:
    """One path of each route and kind: the malformed parameters meet each view's code once
    (a second patient's chart or a tenth reference entry runs the same parsing)."""
    chosen: dict[tuple[object, ...], str] = {}
    for path in sorted(paths):
        try:
            match = resolve(path)
        except Resolver404:
            key: tuple[object, ...] = (path,)
        else:
            key = (match.route, match._func_path,
                   tuple((k, match.kwargs[k]) for k in KIND_KWARGS if k in match.kwargs))
        chosen.setdefault(key, path)
    return sorted(chosen.values())


def _with(url: str, query: dict[str, str]) -> str:
    path = urlsplit(url).path
    return f"{path}?{urlencode(query)}"


@pytest.mark.parametrize("role", ROLES)
def test_it_never_answers_5xx_to_any_page_a_role_can_reach(
    make_user: Callable[..., User], demo_world: dict[str, str], role: str
) -> None:
    client = Client(raise_request_exception=False)
    user = make_user(f"crawl-{role}", role)
    if role == "superuser":
        user.is_superuser = True
        user.save()
    client.force_login(user)
    statuses, forms, shown = crawl(client, ["/admin/", *registered_urls(demo_world)])
    assert len(statuses) > 20, statuses  # the crawl did reach the pages
    failures = [(url, status) for url, status in statuses.items() if status >= 500]
    reached = {urlsplit(url).path for url, status in statuses.items() if status == 200}
    for url in one_per_route(reached):
        for query in MALFORMED_QUERIES:
            response = client.get(_with(url, query))
            if response.status_code >= 500:
                failures.append((_with(url, query), response.status_code))
    # Django's own model pages are left out: garbage there could delete the crawling user.
    # A page the role was refused (403) is refused whatever is posted to it: the policy asks
    # before the view reads the form.
    posted = {urlsplit(u).path for u in forms + [u for u, status in statuses.items()
                                                 if "/patients/" in u and status != 403]}
    for path in sorted(p for p in posted if not p.startswith(DJANGO_MODEL_PAGES)):
        response = client.post(path, GARBAGE_FORM)
        if response.status_code >= 500:
            failures.append((f"POST {path}", response.status_code))
    assert not failures, "\n".join(f"{status} {url}" for url, status in failures)


@pytest.mark.parametrize("role", ROLES[:4])
def test_it_shows_no_link_or_button_that_the_role_may_not_follow(
    make_user: Callable[..., User], demo_world: dict[str, str], role: str
) -> None:
    """Every link and form on every page a role reaches leads somewhere it may go: an action
    the policy refuses is not shown (rather than shown and answered with a 403)."""
    client = Client(raise_request_exception=False)
    client.force_login(make_user(f"crawl-{role}", role))
    pid = demo_world["patient_id"]
    start = [
        "/admin/",
        f"/admin/patients/{pid}/",
        f"/admin/patients/{pid}/mar/",
        f"/admin/patients/{demo_world['other_patient']}/",
        "/admin/wards/MED-1/",
    ]
    statuses, _, shown = crawl(client, start, limit=80)
    assert not refused(client, statuses, shown), "\n".join(refused(client, statuses, shown))


def test_it_reaches_the_pages_of_every_section(
    make_user: Callable[..., User], demo_world: dict[str, str]
) -> None:
    """The crawl is not vacuous: from the home page alone a clerk reaches the worklists, the
    patient index and the admitted patient's chart; every registered page is tried."""
    client = Client(raise_request_exception=False)
    client.force_login(make_user("crawl-clerk", "clerk"))
    statuses, _, _ = crawl(client, ["/admin/"])
    reached = {urlsplit(u).path for u, s in statuses.items() if s == 200}
    assert {
        "/admin/",
        "/admin/patients/",
        "/admin/worklists/",
        "/admin/worklists/admitted/",
    } <= reached
    assert f"/admin/patients/{demo_world['patient_id']}/" in reached, sorted(reached)
    tried = {urlsplit(u).path for u in registered_urls(demo_world)}
    for page in admin.site._pages:  # each page pattern, filled in, is among the tried URLs
        pattern = "^/admin/" + re.sub(r"<(?:\w+:)?\w+>", "[^/]+", page.route) + "$"
        assert any(re.match(pattern, path) for path in tried), page.route
