"""Worklist pages: admin chrome, filters, search, sort links, paging, self-refreshing (htmx).

Each page builds a :class:`queries.Worklist` from the GET parameters (the same parameters
as the API), runs it, and renders rows as cells; htmx re-fetches the table every few seconds
and the page shows how old the data is and how far the relay is behind.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn
from urllib.parse import urlencode

import orjson
from django.contrib import admin
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers

from hisadmin.core import access_log, consistency, held_streams, keys, policy
from hisadmin.core.local_time import clock_time, human_date, human_time
from hisadmin.core.parameters import BadParameter
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.domain import mar, orders, results
from patients.domain.records import SEX_LABELS
from patients.persistence import reference
from worklists.read import queries
from worklists.read.consistency import wait_applied
from worklists.read.lag import relay_lag, updates_stopped
from worklists.read.nurse_ward import assigned_ward

REFRESH_SECONDS = 2
# Set on the table partial only; the page's script (worklists/static/worklists/freshness.js)
# swaps no answer without it, so a login or error page reached through a redirect
# never lands inside the table: the browser opens the page itself instead.
TABLE_MARKER = "X-Worklist-Table"
MAX_TRAIL = 20  # previous pages remembered for "Previous page"
KINDS = [(str(kind), orders.KIND_LABELS[kind]) for kind in orders.KINDS]
STATUSES = [(str(status), orders.STATUS_LABELS[status]) for status in orders.ACTIVE]
URGENCIES = [(str(u), label) for u, label in orders.URGENCY_LABELS.items()]

Cell = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    label: str
    cell: Cell
    sort: str | None = None
    link: bool = False  # the cell links to the patient's chart
    href: Callable[[dict[str, Any]], str] | None = None  # or somewhere else
    # A name: may be 100 characters without a space, so it breaks anywhere rather than
    # widen the table past the window (worklist.css, td.wrap-anywhere).
    wrap: bool = False
    # An identifier (the MRN): read whole, never broken across lines (td.identifier).
    whole: bool = False

    @property
    def css(self) -> str:
        return "wrap-anywhere" if self.wrap else "identifier" if self.whole else ""


@dataclass(frozen=True)
class RowAction:
    """A button on each row: a link (GET) or a form posting to ``url`` (POST), shown only
    to users the policy allows ``action``."""

    label: str
    url: Callable[[dict[str, Any]], str]
    action: str
    method: str = "get"
    when: Callable[[dict[str, Any]], bool] | None = None  # rows it applies to (all: None)


@dataclass
class Filter:
    name: str
    label: str
    choices: list[tuple[str, str]]
    value: str = ""
    blank: str | None = "All"
    # Values accepted without a 400 (None: the choices): a ward of the department just left
    # is dropped, not refused, when the department changes under it.
    accepts: frozenset[str] | None = None


@dataclass
class Page:
    title: str
    url_name: str
    columns: list[Column]
    filters: list[Filter] = field(default_factory=list)
    search_placeholder: str | None = None
    default_sort: str = ""
    actions: list[RowAction] = field(default_factory=list)
    empty: str = "Nothing matches."
    keep: list[tuple[str, str]] = field(default_factory=list)  # carried by the search form
    intro: str = ""  # a sentence above the list, saying what it is for


def _get(key: str) -> Cell:
    return lambda r: r.get(key)


def _label(key: str, labels: dict[Any, str]) -> Cell:
    return lambda r: labels.get(r.get(key) or "", r.get(key))


def _place(r: dict[str, Any]) -> str:
    """Ward by name and bed, as the ward reads it ("—" when not admitted)."""
    if not r.get("wardId"):
        return "—"
    ward = reference.all_of(get_store(), "Ward").get(r["wardId"]) or {}
    return " · ".join(filter(None, (ward.get("name") or r["wardId"], r.get("bed"))))


def _order_page(r: dict[str, Any]) -> str:
    return reverse("admin:order_detail", args=[r["patientId"], r["orderId"]])


PERSON = [Column("MRN", _get("mrn"), "mrn", link=True, whole=True),
          Column("Name", _get("name"), "name", wrap=True)]
ADMITTED_COLUMNS = [
    *PERSON, Column("Age", _get("age"), "age"),
    Column("Sex", _label("sex", SEX_LABELS), "sex"), Column("Ward / bed", _place, "bed"),
    Column("Admitted on", lambda r: human_time(r.get("admittedAt")), "admitted"),
    Column("Attending", _get("attendingName"), "attending"),
    Column("Stay (days)", _get("lengthOfStay"), "stay"),
]
ORDER_COLUMNS = [
    Column("Placed", lambda r: human_time(r.get("placedAt")), "placed"),
    Column("Urgency", _label("urgency", orders.URGENCY_LABELS), "urgency"),
    Column("Type", _label("kind", orders.KIND_LABELS), "kind"),
    Column("Order", _get("description"), href=_order_page),
    Column("Status", _label("status", orders.STATUS_LABELS), "status"),
    *PERSON, Column("Ward / bed", _place, "bed"),
    Column("Assignee", lambda r: r.get("assigneeName") or "—", "assignee"),
]
SEARCH_COLUMNS = [
    *PERSON, Column("Age", _get("age"), "age"), Column("Sex", _label("sex", SEX_LABELS), "sex"),
    Column("Born", lambda r: human_date(r.get("birthDate"), weekday=False)),
    Column("Admitted to", lambda r: _place(r["admission"]) if r.get("admission") else "—"),
]


def _local(instant: str | None, *, with_date: bool = False) -> str:
    """An instant as the ward reads it, in the hospital's time: "14:00", or with its day
    ("Wed 25 Nov, 14:00") when asked."""
    return human_time(instant) if with_date else clock_time(instant)


def _rows(request: HttpRequest, page: Page, rows: list[dict[str, Any]]
          ) -> list[dict[str, Any]]:
    actions = [a for a in page.actions if policy.allows(request.user, a.action)]
    held = held_streams.held_now(get_store()) if rows else {}  # cached: no round trip
    out = []
    for row in rows:
        chart = reverse("admin:patient_chart", args=[row["patientId"]])
        marker = held.get(keys.patient(row["patientId"]))
        out.append({"cells": [(col.cell(row), chart if col.link else
                               col.href(row) if col.href is not None else "", col.css)
                              for col in page.columns],
                    "actions": [{"label": a.label, "url": a.url(row), "method": a.method}
                                for a in actions if a.when is None or a.when(row)],
                    # the patient's rows stopped following the record at a failed event
                    "held_since": _local(marker.since, with_date=True) if marker else None})
    return out


Fetch = Callable[[str | None], queries.Result]  # continuation → one page


def _trail(raw: str | None) -> list[str]:
    """The tokens of the pages before this one ("" is the first page), as the "back"
    parameter carries them; anything unreadable is no trail (a "Previous" link is lost,
    nothing else)."""
    if not raw:
        return []
    try:
        trail = orjson.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        return []
    if not isinstance(trail, list) or not all(isinstance(t, str) for t in trail):
        return []
    return trail[-MAX_TRAIL:]


def _trail_param(trail: list[str]) -> dict[str, str]:
    if not trail:
        return {}
    return {"back": base64.urlsafe_b64encode(orjson.dumps(trail[-MAX_TRAIL:])).decode()
            .rstrip("=")}


def _paging(request: HttpRequest, next_token: str | None) -> dict[str, Any]:
    """Links to the next and the previous page; the previous pages' tokens ride along."""
    here = request.GET.get("page") or ""
    trail = _trail(request.GET.get("back"))
    base = {k: v for k, v in request.GET.items() if k not in ("page", "back")}
    next_href = prev_href = ""
    if next_token:
        next_href = "?" + urlencode({**base, "page": next_token, **_trail_param([*trail, here])})
    if here:
        before = trail[-1] if trail else ""
        prev_href = "?" + urlencode({**base, **({"page": before} if before else {}),
                                     **_trail_param(trail[:-1])})
    return {"next_href": next_href, "prev_href": prev_href,
            "page_number": len(trail) + 1 if here else 1}


def _settle(request: HttpRequest) -> str:
    """Wait, at most 5 s, for the user's own last command (its consistency token kept in the
    session by the middleware) to reach the views, so the list they land on shows it; once
    only. A note when it has not arrived yet."""
    session = getattr(request, "session", None)
    token = session.pop(consistency.SESSION_KEY, None) if session is not None else None
    if not token:
        return ""
    try:
        positions = consistency.decode(token)
        if wait_applied(get_store(), positions, timeout=consistency.WAIT_SECONDS):
            return ""
    except consistency.BadToken:  # the session's own token, of a store since replaced
        return ""
    return "Your last change has not reached this list yet; it will show within seconds."


DIRECTIONS = ("", "asc", "desc")


def refuse(parameter: str, label: str, value: str, choices: list[tuple[str, str]]) -> NoReturn:
    """The 400 page naming the parameter and what it takes, in the API's words
    (hisadmin.core.parameters), each choice with its label."""
    allowed = [f"{name} ({code})" if name and name != code else code for code, name in choices]
    raise BadRequest(str(BadParameter(parameter, value, allowed, label=label)))


def _check_params(request: HttpRequest, page: Page) -> None:
    """A sort key, direction or filter value the page does not offer is a 400 naming the
    parameter and its values (the README's promise, the API's rule), never silently another
    list: a mistyped link must not look like an answer."""
    g = request.GET
    sorts = [(col.sort, col.label) for col in page.columns if col.sort]
    if page.default_sort and page.default_sort not in {code for code, _ in sorts}:
        sorts.append((page.default_sort, ""))
    if g.get("sort") and g["sort"] not in {code for code, _ in sorts}:
        refuse("sort", "Sort", g["sort"], sorts)
    if g.get("dir", "") not in DIRECTIONS:
        refuse("dir", "Sort direction", g["dir"], [("asc", "ascending"), ("desc", "descending")])
    for f in page.filters:
        value = g.get(f.name, "")
        accepted = f.accepts if f.accepts is not None else {code for code, _ in f.choices}
        if value and value not in accepted:
            labels = dict(f.choices)
            refuse(f.name, f.label, value, f.choices if f.accepts is None else
                    [(code, labels.get(code, "")) for code in sorted(f.accepts)])


def _render(request: HttpRequest, page: Page, fetch: Fetch | None, *,
            error: str = "") -> HttpResponse:
    _check_params(request, page)
    settling = _settle(request)
    started = time.perf_counter()
    result = fetch(request.GET.get("page") or None) if fetch is not None else None
    rows = result.rows if result is not None else []
    access_log.note_list(request, (row.get("patientId") for row in rows))  # the access audit
    params = {k: v for k, v in request.GET.items() if k not in ("page", "back", "sort", "dir")}
    sort = request.GET.get("sort") or page.default_sort
    descending = request.GET.get("dir") == "desc"
    headers = []
    for col in page.columns:
        href = ""
        if col.sort:
            flip = col.sort == sort and not descending
            href = "?" + urlencode({**params, "sort": col.sort, **({"dir": "desc"} if flip else {})})
        headers.append({"label": col.label, "href": href, "sorted": col.sort == sort,
                        "descending": descending})
    context = {
        "page": page, "headers": headers, "rows": _rows(request, page, rows), "count": len(rows),
        "total": None if result is None else result.total,
        "truncated": result is not None and result.truncated,
        "searched": fetch is not None,
        "has_actions": any(policy.allows(request.user, a.action) for a in page.actions),
        **_paging(request, None if result is None else result.continuation),
        "query_ms": (time.perf_counter() - started) * 1000, "loaded_at": time.time(),
        "lag": _lag(), "stopped": updates_stopped(), "error": error, "refresh": REFRESH_SECONDS, "settling": settling,
        "q": request.GET.get("q", ""),
    }
    if request.htmx:
        response: HttpResponse = TemplateResponse(request, "worklists/_table.html", context,
                                                  headers={TABLE_MARKER: "1"})
    else:
        response = admin.site.render(request, "worklists/worklist.html", context,
                                     title=page.title)
    # One address, two answers: "Back" must bring the page, never the cached table.
    patch_vary_headers(response, ("HX-Request",))
    return response


def _one(worklist: queries.Worklist) -> Fetch:
    return lambda token: queries.run(get_store(), worklist, continuation=token, total=True)


def _across(worklists: list[queries.Worklist]) -> Fetch:
    return lambda token: queries.run_across(get_store(), worklists, continuation=token,
                                            total=True)


def _lag() -> dict[str, Any]:
    try:
        return relay_lag()
    except Exception:  # noqa: BLE001 - the page still shows rows when lag is unknown
        return {"pending": None, "seconds": None}


ALL_DEPARTMENTS = "all"


def _departments(request: HttpRequest) -> tuple[list[tuple[str, str]], str]:
    """The department choices (every department first) and the chosen one (none: the first
    department); an unknown code is the 400 page."""
    departments = reference.choices(get_store(), "Department")
    codes = {code for code, _ in departments} | {ALL_DEPARTMENTS}
    chosen = request.GET.get("department", "")
    if chosen and chosen not in codes:
        refuse("department", "Department", chosen,
                [(ALL_DEPARTMENTS, "All departments"), *departments])
    if not chosen:
        chosen = departments[0][0] if departments else ALL_DEPARTMENTS
    return [(ALL_DEPARTMENTS, "All departments"), *departments], chosen


def _per_department(departments: list[tuple[str, str]], chosen: str,
                    build: Callable[[str], queries.Worklist]) -> Fetch:
    if chosen == ALL_DEPARTMENTS:
        return _across([build(code) for code, _ in departments if code != ALL_DEPARTMENTS])
    return _one(build(chosen))


def department_and_ward(request: HttpRequest
                        ) -> tuple[list[tuple[str, str]], str, str, list[Filter]]:
    """The department choices, the chosen department and ward (a ward of another
    department is dropped), and the two filters that choose them."""
    departments, department = _departments(request)
    every_ward = reference.all_of(get_store(), "Ward")
    wards = [(code, w["name"]) for code, w in every_ward.items()
             if department in (ALL_DEPARTMENTS, w.get("departmentId"))]
    ward = request.GET.get("ward", "")
    ward = ward if ward in {code for code, _ in wards} else ""
    return departments, department, ward, [
        Filter("department", "Department", departments, department, blank=None),
        Filter("ward", "Ward", wards, ward, blank="All wards", accepts=frozenset(every_ward))]


@requires("read_worklists")
def admitted_patients(request: HttpRequest) -> HttpResponse:
    departments, department, ward, filters = department_and_ward(request)
    g = request.GET
    page = Page("Admitted patients", "worklist_admitted", ADMITTED_COLUMNS, filters,
                "Name starts with… or MRN", "bed")
    return _render(request, page, _per_department(departments, department, lambda d: (
        queries.admitted(d, ward=ward, q=g.get("q", ""), sort=g.get("sort", "bed"),
                         descending=g.get("dir") == "desc"))))


def _order_filters(request: HttpRequest) -> list[Filter]:
    g = request.GET
    return [Filter("kind", "Type", KINDS, g.get("kind", "")),
            Filter("status", "Status", STATUSES, g.get("status", "")),
            Filter("urgency", "Urgency", URGENCIES, g.get("urgency", ""))]


@requires("read_order_worklists")
def active_orders(request: HttpRequest) -> HttpResponse:
    departments, department = _departments(request)
    g = request.GET
    page = Page("Active orders", "worklist_orders", ORDER_COLUMNS, [
        Filter("department", "Department", departments, department, blank=None),
        *_order_filters(request)], None, "placed")
    return _render(request, page, _per_department(departments, department, lambda d: (
        queries.orders(d, kind=g.get("kind", ""), status=g.get("status", ""),
                       urgency=g.get("urgency", ""), assignee=g.get("assignee", ""),
                       sort=g.get("sort", "placed"), descending=g.get("dir") == "desc"))))


@requires("read_order_worklists")
def my_orders(request: HttpRequest) -> HttpResponse:
    g = request.GET
    page = Page("My orders", "worklist_my_orders", ORDER_COLUMNS, _order_filters(request),
                None, "placed")
    return _render(request, page, _one(queries.my_orders(
        str(request.user.pk), kind=g.get("kind", ""), status=g.get("status", ""),
        urgency=g.get("urgency", ""), sort=g.get("sort", "placed"),
        descending=g.get("dir") == "desc")))


def _admitting(request: HttpRequest) -> tuple[str, list[tuple[str, str]], list[RowAction]]:
    """The search on the way from a free bed's "Admit here" (``admit_ward``, ``admit_bed``):
    a sentence naming the bed, the parameters the search keeps, and an "Admit here" button
    on each patient not admitted (the admit form, the ward and bed filled). Nothing when
    not asked for or when the user may not admit; an unknown ward is a 400."""
    g = request.GET
    ward_id, bed = g.get("admit_ward", ""), g.get("admit_bed", "")
    if not ward_id or not policy.allows(request.user, "admit"):
        return "", [], []
    ward = reference.all_of(get_store(), "Ward").get(ward_id)
    if ward is None or (bed and bed not in (ward.get("beds") or [])):
        raise BadRequest("There is no such ward or bed to admit to.")
    fill = urlencode({"department_id": ward.get("departmentId", ""), "ward_id": ward_id,
                      "bed": bed})
    action = RowAction("Admit here", lambda r: reverse(
        "admin:patient_admit", args=[r["patientId"]]) + "?" + fill, "admit",
        when=lambda r: not r.get("admission"))
    where = " · ".join(filter(None, (ward.get("name") or ward_id, bed and f"bed {bed}")))
    intro = f"Admitting to {where}: find the patient, then “Admit here” opens the admit form."
    return intro, [("admit_ward", ward_id), ("admit_bed", bed)], [action]


@requires("read_worklists")
def patient_search(request: HttpRequest) -> HttpResponse:
    g = request.GET
    intro, keep, actions = _admitting(request)
    page = Page("Find patients", "worklist_search", SEARCH_COLUMNS, [],
                "SMITH, John · John Smith · Smi · MRN", "name", actions, keep=keep,
                intro=intro)
    q = g.get("q", "").strip()
    if not q:
        return _render(request, page, None)
    if any(c.isdigit() for c in q):
        found = queries.by_mrn(get_store(), q)
        return _render(request, page, lambda token: queries.Result(found, None, 0,
                                                                     total=len(found)))
    try:
        searches = queries.name_searches(q, sort=g.get("sort", "name"),
                                         descending=g.get("dir") == "desc")
    except queries.SearchTooShort as exc:
        return _render(request, page, None, error=str(exc))
    return _render(request, page, lambda token: queries.run_searches(
        get_store(), searches, continuation=token))


def _dose_time(row: dict[str, Any]) -> str:
    today = timezone.localdate().isoformat()
    local = timezone.localtime(datetime.fromisoformat(row["scheduledFor"]))
    return _local(row["scheduledFor"], with_date=local.date().isoformat() != today)


MEDS_DUE_COLUMNS = [
    Column("Due at", _dose_time), Column("Status", lambda r: mar.STATUS_LABELS[r["doseStatus"]]),
    Column("Bed", lambda r: r.get("bed") or "—"), *PERSON,
    Column("Medication", _get("description"), href=_order_page),
]


def _analyte_names() -> dict[str, str]:
    """Analyte names by code, from the LabTest reference data (cached per process)."""
    return {a["code"]: a.get("name") or a["code"]
            for test in reference.all_of(get_store(), "LabTest").values()
            for a in test.get("analytes") or ()}


def _status(r: dict[str, Any]) -> str:
    """A laboratory's result that is not simply final says so first ("Preliminary: …",
    "Corrected: …"); a final one says nothing."""
    status = r.get("resultStatus") or results.FINAL
    return "" if status == results.FINAL else f"{results.STATUS_LABELS[status]}: "


def _flags(r: dict[str, Any]) -> str:
    """A result's flags in words: "Abnormal: Potassium 6.1 mmol/L, high; Sodium 128 mmol/L,
    low". A row projected before the values were kept in words names its analytes from the
    reference data ("Abnormal: Potassium high; Sodium low")."""
    if not r.get("abnormal"):
        return "Within range"
    words = r.get("abnormalValues")
    if not words:
        names = _analyte_names()
        words = ([f"{names.get(a, a)} high" for a in r.get("high") or ()]
                 + [f"{names.get(a, a)} low" for a in r.get("low") or ()])
    return "Abnormal: " + "; ".join(words)


REVIEW_COLUMNS = [
    Column("Resulted", lambda r: _local(r.get("resultedAt"), with_date=True), "resulted"),
    Column("Flags", lambda r: _status(r) + _flags(r), "abnormal"),
    Column("Type", _label("kind", orders.KIND_LABELS)),
    Column("Order", _get("description"), href=_order_page), *PERSON,
    Column("Ward / bed", lambda r: _place(r) if r.get("wardId") else "Not admitted", "bed"),
    Column("Resulted by", _get("resultedByName")),
]


def _wards() -> list[tuple[str, str]]:
    store = get_store()
    departments = dict(reference.choices(store, "Department"))
    wards = reference.all_of(store, "Ward")
    return sorted(((code, f"{departments.get(w.get('departmentId'), '')} — {w['name']}")
                   for code, w in wards.items() if w.get("active", True)),
                  key=lambda choice: choice[1])


MEDS_DUE_WARD = "meds_due_ward"  # the session's last ward chosen on Medications due


def _nurse_ward(request: HttpRequest, known: set[str]) -> str:
    """The ward Medications due opens on: the one asked for (remembered), else where the
    shift's assignments put the user now, else the ward she chose last, else where she
    worked last shift; "" when none of these."""
    asked = request.GET.get("ward", "")
    if asked in known:
        if request.session.get(MEDS_DUE_WARD) != asked:
            request.session[MEDS_DUE_WARD] = asked
        return asked
    store, user = get_store(), str(request.user.pk)
    now, tz = timezone.now(), timezone.get_current_timezone()
    remembered = request.session.get(MEDS_DUE_WARD)
    return (assigned_ward(store, user, now, tz, known)
            or (remembered if remembered in known else None)
            or assigned_ward(store, user, now, tz, known, last_shift=True) or "")


def _known_ward(request: HttpRequest, wards: list[tuple[str, str]]) -> None:
    """A ward asked for that is not one of ``wards`` is the 400 page naming them, never
    silently another ward's list."""
    asked = request.GET.get("ward", "")
    if asked and asked not in {code for code, _ in wards}:
        refuse("ward", "Ward", asked, wards)


def ward_filter(request: HttpRequest) -> tuple[str, Filter]:
    """The chosen ward (none asked for: the first; an unknown one: the 400 page) and the
    filter that chooses it: a ward's list always shows one ward."""
    wards = _wards()
    _known_ward(request, wards)
    ward = request.GET.get("ward", "") or (wards[0][0] if wards else "")
    return ward, Filter("ward", "Ward", wards, ward, blank=None)


@requires("read_medications_due")
def medications_due(request: HttpRequest) -> HttpResponse:
    wards = _wards()
    known = {code for code, _ in wards}
    _known_ward(request, wards)
    ward = _nurse_ward(request, known) or (wards[0][0] if wards else "")
    here = request.path + "?" + urlencode({"ward": ward})
    page = Page("Medications due", "worklist_meds_due", MEDS_DUE_COLUMNS, [
        Filter("ward", "Ward", wards, ward, blank=None)], None, "",
        [RowAction("Record", lambda r: reverse("admin:patient_mar_record", args=[
            r["patientId"], r["orderId"]]) + "?" + urlencode({"slot": r["slotId"],
                                                               "next": here}),
            "administer")],
        empty="No doses due, late or coming up within the hour on this ward.")
    if not ward:
        return _render(request, page, None, error="No wards are set up yet.")
    return _render(request, page, lambda token: queries.medications_due(
        get_store(), ward, tz=timezone.get_current_timezone()))


@requires("read_results_to_review")
def results_to_review(request: HttpRequest) -> HttpResponse:
    g = request.GET
    here = request.get_full_path()
    page = Page("Results to review", "worklist_reviews", REVIEW_COLUMNS, [
        Filter("kind", "Type", [(k, n) for k, n in KINDS if k != "medication"],
               g.get("kind", "")),
        Filter("abnormal", "Flags", [("1", "Abnormal only")], g.get("abnormal", ""),
               blank="All results")], None, "resulted",
        [RowAction("Acknowledge", lambda r: reverse("admin:order_acknowledge", args=[
            r["patientId"], r["orderId"]]) + "?" + urlencode({"next": here}),
            "acknowledge_result", method="post")],
        empty="No results waiting for your review.")
    return _render(request, page, _one(queries.results_to_review(
        str(request.user.pk), kind=g.get("kind", "") if g.get("kind") in ("lab", "imaging")
        else "", abnormal=g.get("abnormal") == "1", sort=g.get("sort", "resulted"),
        descending=g.get("dir") == "desc")))
