"""What the API state machine (``test_api_state_machine.py``) stands on.

The API's own request schemas as Hypothesis strategies (through schemathesis, from
``GET /api/v1/openapi.json``), realistic values beside them (reference codes, odd Unicode,
times with microseconds and the hospital's offset), and :class:`Api`: a test client that
checks the shape of every answer (never a 5xx, every 4xx a problem) and keeps a transcript,
so a failure shows the requests that led to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import schemathesis
from django.http import HttpResponse
from django.test import Client
from hypothesis import strategies as st

JSON = "application/json"
PROBLEM = "application/problem+json"
TRANSCRIPT_LINES = 40  # the requests a failure message shows, newest last

# Names and free text as people type them: accents, combining marks, other scripts,
# apostrophes, hyphens, emoji. Mostly text a person could mean (so most commands succeed);
# sometimes characters the API must refuse with a 422 (controls, text-direction marks).
ODD_NAMES = ["Zoë", "Ñúñez", "O'Brien", "Nguyễn", "Łukasz", "李", "Ærø-Skøbing",
             "Mc\u0301Donald", "Åsa Britt", "Ölçer", "Дмитрий", "Αλέξης", "محمد", "José María",
             "ʻOkalani", "Strauß", "İnci", "Ǆurić", "😀 Smile", "de la Cruz"]
ODD_TEXT = ["Café au lait ☕", "No\u2011break\u00a0space", "<script>alert(1)</script>",
            "Robert'); DROP TABLE--", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "emoji 🩺💊", "\\u0000 not a null",
            "%s %d {0}", "ﷺ ﷽", "Ａｂｃ ﬁ ǅ"]
HOSTILE_TEXT = ["tab\tand\nnewline", "\u202ereversed", "zero\u200bwidth", "nul\x00byte",
                "bell\x07", "line\u2028separator"]
# What a person types: letters, marks, digits, punctuation, symbols and spaces of any
# script; no controls, format characters, private use or unassigned code points.
TYPED = st.characters(exclude_categories=("Cc", "Cs", "Cf", "Co", "Cn", "Zl", "Zp"))


def text(max_size: int, min_size: int = 0) -> st.SearchStrategy[str]:
    """Free text: mostly typed text (odd samples or any typed characters), sometimes text
    with characters the API refuses, or anything at all."""
    def fits(t: str) -> bool:
        return min_size <= len(t) <= max_size and (min_size == 0 or bool(t.strip()))

    typed = st.text(TYPED, min_size=min_size, max_size=max_size).filter(fits)
    odd = st.sampled_from([t for t in ODD_TEXT if fits(t)])
    return st.one_of(odd, odd, typed, typed, typed, typed,
                     st.sampled_from([t for t in HOSTILE_TEXT if fits(t)] or [""]),
                     st.text(min_size=min_size, max_size=max_size))


def names() -> st.SearchStrategy[str]:
    """A given or family name: mostly odd but plausible, sometimes anything."""
    typed = st.text(TYPED, min_size=1, max_size=40).filter(lambda t: t.strip() == t != "")
    odd = st.sampled_from(ODD_NAMES)
    return st.one_of(odd, odd, odd, typed, typed, st.text(min_size=1, max_size=40))


def moment(tz: tzinfo, *, back_hours: float = 10, ahead_hours: float = 1
           ) -> st.SearchStrategy[str]:
    """An ISO 8601 time near now in the hospital's zone, with microseconds and its offset."""
    span = int((back_hours + ahead_hours) * 3_600_000_000)

    def at(offset_us: int) -> str:
        now = datetime.now(tz)
        return (now - timedelta(hours=back_hours) + timedelta(microseconds=offset_us)
                ).isoformat()

    return st.integers(0, span).map(at)


def birth_dates() -> st.SearchStrategy[str]:
    return st.dates(date(1900, 1, 1), date.today()).map(date.isoformat)


def decimal_text(value: float | Decimal) -> str:
    """A dose or value as the API takes it: a decimal string, at most three places."""
    return format(Decimal(str(value)).quantize(Decimal("0.001")).normalize(), "f")


class Bodies:
    """Request bodies drawn from the OpenAPI document's own request schemas."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.schema = schemathesis.openapi.from_dict(document)
        self._cache: dict[tuple[str, str], st.SearchStrategy[dict[str, Any]]] = {}

    def of(self, method: str, path: str) -> st.SearchStrategy[dict[str, Any]]:
        """Bodies of the operation ``method path`` (``path`` as the document spells it)."""
        key = (method, path)
        if key not in self._cache:
            operation = self.schema[path][method]
            placeholders = {p.name: "x" for p in operation.path_parameters}
            self._cache[key] = operation.as_strategy(path_parameters=placeholders).map(
                lambda case: case.body if isinstance(case.body, dict) else {})
        return self._cache[key]


def blended(schema: st.SearchStrategy[dict[str, Any]],
            realistic: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Mostly the realistic body, so commands succeed often; sometimes the realistic values
    laid over a body drawn from the schema (its other fields as generated); sometimes the
    schema's body alone."""
    over = st.tuples(schema, realistic).map(lambda pair: {**pair[0], **pair[1]})
    return st.one_of(*[realistic] * 6, over, schema)


@dataclass
class Call:
    """One request and its answer, as the transcript shows it."""

    role: str
    method: str
    path: str
    body: Any
    headers: dict[str, str]
    status: int
    problem: str = ""  # a 4xx's detail and fields at fault

    def __str__(self) -> str:
        body = "" if self.body is None else " " + json.dumps(self.body, ensure_ascii=False)
        heads = "".join(f" [{k}: {v[:24]}]" for k, v in self.headers.items())
        why = f" ({self.problem})" if self.problem else ""
        return f"{self.role}: {self.method} {self.path}{heads}{body} -> {self.status}{why}"


@dataclass
class Transcript:
    """Every request of the run, and the first check that failed (with the requests before
    it): the stack outside the machine is not replayed, so Hypothesis's own replay of a
    failing example may not fail the same way, and the first failure is the one to show."""

    calls: list[Call] = field(default_factory=list)
    first_failure: str | None = None

    def tail(self) -> str:
        return "\n".join(str(c) for c in self.calls[-TRANSCRIPT_LINES:])

    def fail(self, message: str) -> AssertionError:
        full = f"{message}\nrequests so far:\n{self.tail()}"
        if self.first_failure is None:
            self.first_failure = full
        return AssertionError(full)


class Api:
    """A role's test client: every answer is checked (no 5xx; a 4xx is a problem document)
    and written to the shared transcript."""

    def __init__(self, role: str, client: Client, transcript: Transcript) -> None:
        self.role, self.client, self.transcript = role, client, transcript

    def send(self, method: str, path: str, body: Any = None, *,
             query: dict[str, str] | None = None, headers: dict[str, str] | None = None
             ) -> HttpResponse:
        url = f"{path}?{urlencode(query)}" if query else path
        heads = {k: v for k, v in (headers or {}).items() if v is not None}
        data = "" if body is None else json.dumps(body)
        response = self.client.generic(method, url, data, content_type=JSON, headers=heads)
        self.transcript.calls.append(Call(self.role, method, url, body, heads,
                                          response.status_code, _problem(response)))
        self.check(response)
        return response

    def get(self, path: str, query: dict[str, str] | None = None,
            headers: dict[str, str] | None = None) -> HttpResponse:
        return self.send("GET", path, query=query, headers=headers)

    def ok(self, path: str, query: dict[str, str] | None = None,
           headers: dict[str, str] | None = None) -> Any:
        """A read that must succeed; its JSON."""
        response = self.get(path, query, headers)
        self.expect(response.status_code == 200, f"GET {path} answered {response.status_code}: "
                    f"{response.content[:500]!r}")
        return response.json()

    def check(self, response: HttpResponse) -> None:
        status = response.status_code
        self.expect(status < 500, f"a {status}: {response.content[:800]!r}")
        if 400 <= status < 500:
            # FHIR answers its errors as OperationOutcomes, the JSON API as problems.
            kind = response.get("Content-Type", "")
            self.expect(kind.startswith(PROBLEM) or kind.startswith("application/fhir+json"),
                        f"a {status} that is not a problem ({kind}): {response.content[:300]!r}")

    def expect(self, condition: object, message: str) -> None:
        if not condition:
            raise self.transcript.fail(message)


def _problem(response: HttpResponse) -> str:
    if response.status_code < 400 or not response.get("Content-Type", "").startswith(PROBLEM):
        return ""
    found = json.loads(response.content)
    fields = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in found.get("errors") or ())
    return (found.get("detail") or found.get("title") or "")[:200] + (f" [{fields}]" if fields
                                                                        else "")


def choose(data: st.DataObject, items: list[Any], label: str) -> Any:
    """One of ``items``, drawn as a number whatever their count: the store outside the
    machine (time, earlier examples, the worker) changes how many there are, and a draw
    whose shape followed it would make Hypothesis's replays disagree."""
    return items[data.draw(st.integers(0, 2**16), label=label) % len(items)]


class Pages:
    """A logged-in browser session (test client): every page must render."""

    def __init__(self, role: str, client: Client, transcript: Transcript) -> None:
        self.role, self.client, self.transcript = role, client, transcript

    def open(self, path: str, query: dict[str, str] | None = None) -> HttpResponse:
        url = f"{path}?{urlencode(query)}" if query else path
        response = self.client.get(url)
        self.transcript.calls.append(Call(f"{self.role} page", "GET", url, None, {},
                                          response.status_code))
        if response.status_code != 200:
            raise self.transcript.fail(f"page {url} answered {response.status_code}: "
                                       f"{response.content[:600]!r}")
        return response


def pages_of(api: Api, path: str, query: dict[str, str],
             headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every row of a worklist, following ``continuation``."""
    rows: list[dict[str, Any]] = []
    page: str | None = None
    while True:
        asked = {**query, "page_size": "200", **({"page": page} if page else {})}
        body = api.ok(path, asked, headers)
        rows.extend(body["items"])
        page = body.get("continuation")
        if not page:
            return rows
        headers = None  # the first page waited for the token already

