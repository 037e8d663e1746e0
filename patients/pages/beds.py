"""Bed boards: every bed of a ward as a card (free, occupied, being cleaned), live.

The board re-fetches its cards with htmx every few seconds, like the worklists, and says how
fresh they are. In *pick* mode (``?pick=admit|transfer&patient=<id>``) free cards lead back
to the admit or transfer form with the ward and bed chosen. Thin: one query per board.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_vary_headers

from cosmos_backend.store import DocumentStore
from hisadmin.core import access_log, policy, updates
from hisadmin.core.local_time import span, to_local
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients.domain.beds import Bed, BedState, ward_metrics
from patients.domain.errors import DomainError
from patients.domain.observations import RISK_LABELS, Risk
from patients.domain.records import SEX_LABELS, AllergyStatus, allergies_in_words
from patients.pages.assignments import panel as shift_panel
from patients.persistence import beds, reference
from patients.use_cases.beds import MarkBedClean, mark_bed_clean, ward_entry

REFRESH_SECONDS = 3
CARDS_MARKER = "X-Bed-Board"  # the response header of the cards' refresh (freshness.js)
PICKS = {
    "admit": ("admin:patient_admit", "Admit here"),
    "transfer": ("admin:patient_transfer", "Move here"),
}
# What the admit form had typed when the user went to choose a bed: carried through the
# board's links in the query string and handed back to the form (``initial_from``).
KEPT_FIELDS = ("attending", "reason")


# ------------------------------------------------------------------ choosing a bed
@dataclass(frozen=True)
class Placement:
    """Where a patient may go: the department's wards and the chosen ward's free beds."""

    departments: list[tuple[str, str]]
    department: str
    wards: list[tuple[str, str]]
    ward: str
    free_beds: list[str]


def ward_choices(store: DocumentStore, department: str) -> list[tuple[str, str]]:
    """(code, name) of the department's active wards, by name."""
    wards = reference.all_of(store, "Ward")
    return [
        (code, name)
        for code, name in reference.choices(store, "Ward")
        if wards[code].get("departmentId") == department
    ]


def placement(store: DocumentStore, department: str = "", ward: str = "") -> Placement:
    """The wards of ``department`` (the first one when unknown) and the free beds of ``ward``
    (the department's first ward when it is not one of them): one query for the beds."""
    departments = reference.choices(store, "Department")
    codes = [code for code, _ in departments]
    if department not in codes:
        department = codes[0] if codes else ""
    wards = ward_choices(store, department)
    if ward not in [code for code, _ in wards]:
        ward = wards[0][0] if wards else ""
    free: list[str] = []
    if ward:
        entry = reference.all_of(store, "Ward")[ward]
        free = [
            b.code
            for b in beds.board(store, ward, entry.get("beds", []))
            if b.state == BedState.FREE
        ]
    return Placement(departments, department, wards, ward, free)


def pick_url(kind: str, patient_id: str, department: str, ward: str,
             kept: dict[str, str] | None = None) -> str:
    """The board in pick mode for the admit or transfer form of ``patient_id``; ``kept``:
    what the form had typed (:data:`KEPT_FIELDS`), given back to it with the bed."""
    carried = {k: v for k, v in (kept or {}).items() if k in KEPT_FIELDS and v}
    query = urlencode({"pick": kind, "patient": patient_id, "department": department,
                       **carried})
    return reverse("admin:bed_board", args=[ward]) + "?" + query if ward else ""


# ------------------------------------------------------------------ the board
def _name(entries: dict[str, dict[str, Any]], code: str | None) -> str:
    """A reference entry's name (its code when it has none)."""
    return (entries.get(code or "") or {}).get("name") or code or ""


def news2_badge(badge: dict[str, Any] | None, now: datetime) -> dict[str, Any] | None:
    """A card's NEWS2 badge in words on the clock ``now`` (None: a card written before
    badges): the score and its risk (the class colours it; the words say it too), whether
    the newest set is incomplete, overdue (and by how long) or when the next set is due."""
    if not badge:
        return None
    risk = badge.get("risk")
    due = badge.get("nextDueAt")
    moment = to_local(due)  # stored UTC (a time without an offset is UTC too)
    late = int((now - moment).total_seconds() // 60) if moment else -1
    return {
        "score": badge.get("score"),
        "risk": risk or "none",
        "risk_label": f"{RISK_LABELS[Risk(risk)]} risk" if risk else "No score yet",
        "incomplete": bool(badge.get("incomplete")),
        "not_escalated": bool(badge.get("notEscalated")),
        "overdue": span(late) if late > 0 else "",
        "next_due": due if late <= 0 else "",
    }


def _card(bed: Bed, today: date, now: datetime) -> dict[str, Any]:
    card: dict[str, Any] = {
        "code": bed.code,
        "state": str(bed.state),
        "label": bed.label,
        "since": bed.since or "",  # the template shows it in local time
    }
    o = bed.occupant
    if o is not None:
        status = AllergyStatus(o.allergy_status)
        sex = "Sex unknown" if o.sex == "unknown" else SEX_LABELS.get(o.sex, o.sex)
        card.update(
            patient_id=o.patient_id,
            name=o.display_name,
            age=o.age(today),
            sex=sex,
            admitted_on=o.admitted_at,  # an instant: its local day is shown
            stay=o.length_of_stay(today),
            allergy=str(status),
            allergy_label=allergies_in_words(status, o.allergies),
            news2=news2_badge(o.news2, now),
        )
    return card


def _pick(request: HttpRequest, ward: dict[str, Any]) -> dict[str, Any] | None:
    """Pick mode, when asked for by a user who may admit / transfer: where a free card
    leads (``form``: the patient's form, to which the ward and bed are added)."""
    kind, patient = request.GET.get("pick", ""), request.GET.get("patient", "")
    if kind not in PICKS or not patient or not policy.allows(request.user, kind):
        return None
    url_name, label = PICKS[kind]
    try:
        form = reverse(url_name, args=[patient])
    except NoReverseMatch:  # a mangled id: no pick links, the board still shows
        return None
    kept = {k: request.GET[k] for k in KEPT_FIELDS if request.GET.get(k)}
    return {
        "kind": kind,
        "label": label,
        "patient": patient,
        "back": form + ("?" + urlencode(kept) if kept else ""),
        "form": form,
        "department": request.GET.get("department") or ward.get("departmentId", ""),
        "kept": kept,
    }


def _pick_href(pick: dict[str, Any], ward: dict[str, Any], bed: str) -> str:
    return (
        pick["form"]
        + "?"
        + urlencode(
            {"department_id": ward.get("departmentId", ""), "ward_id": ward["code"], "bed": bed,
             **pick["kept"]}
        )
    )


def _admit_here_href(ward: dict[str, Any], bed: str) -> str:
    """A free bed's "Admit here" on a plain board: find the patient first (the search keeps
    the ward and bed and leads to the admit form with them filled)."""
    return reverse("admin:worklist_search") + "?" + urlencode(
        {"admit_ward": ward["code"], "admit_bed": bed})


def _board_context(request: HttpRequest, ward_id: str) -> dict[str, Any]:
    started = time.perf_counter()
    store = get_store()
    ward = {"code": ward_id, **ward_entry(store, ward_id)}
    board = beds.board(store, ward_id, ward.get("beds", []))
    access_log.note_list(request, (b.occupant.patient_id for b in board if b.occupant))
    now = datetime.now(UTC)
    cards = [_card(b, now.date(), now) for b in board]
    pick = _pick(request, ward)
    admit_here = pick is None and policy.allows(request.user, "admit")
    for card in cards:
        if card["state"] != BedState.FREE:
            continue
        if pick is not None:
            card["pick_href"] = _pick_href(pick, ward, card["code"])
        elif admit_here:
            card["admit_href"] = _admit_here_href(ward, card["code"])
    departments = reference.all_of(store, "Department")
    wards = reference.all_of(store, "Ward")
    # Admitting: the department was chosen on the form, so only its wards are offered.
    only = pick["department"] if pick is not None and pick["kind"] == "admit" else ""
    switch = [
        (code, f"{name} · {_name(departments, wards[code].get('departmentId'))}")
        for code, name in reference.choices(store, "Ward")
        if not only or wards[code].get("departmentId") == only
    ]
    return {
        "ward": ward,
        "cards": cards,
        "metrics": ward_metrics(board),
        "department_name": _name(departments, ward.get("departmentId")),
        "can_clean": policy.allows(request.user, "clean_bed"),
        "can_observe": policy.allows(request.user, "record_observations"),
        "pick": pick,
        "switch": switch,
        "refresh": REFRESH_SECONDS,
        "loaded_at": time.time(),
        "stopped": updates.stopped(),
        "shift": shift_panel(request, store, ward, cards),  # the nurses of the shift
        "query_ms": (time.perf_counter() - started) * 1000,
        "query": request.GET.urlencode(),
    }


@requires("read_beds")
def ward_index(request: HttpRequest) -> HttpResponse:
    """Every active ward with its counts, by department (one query per ward)."""
    store = get_store()
    departments = reference.all_of(store, "Department")
    wards = reference.all_of(store, "Ward")
    groups: dict[str, list[dict[str, Any]]] = {}
    for code, name in reference.choices(store, "Ward"):
        m = ward_metrics(beds.board(store, code, wards[code].get("beds", [])))
        groups.setdefault(_name(departments, wards[code].get("departmentId")), []).append(
            {"code": code, "name": name, "metrics": m}
        )
    return admin.site.render(
        request, "patients/bed_board.html", {"groups": sorted(groups.items())}, title="Bed boards"
    )


@requires("read_beds")
def bed_board(request: HttpRequest, ward_id: str) -> HttpResponse:
    if "ward" in request.GET:  # the ward switcher
        rest = request.GET.copy()
        chosen = rest.pop("ward")[0]
        try:
            target = reverse("admin:bed_board", args=[chosen])
        except NoReverseMatch:  # not a ward code at all
            return redirect("admin:ward_index")
        return redirect(target + (f"?{rest.urlencode()}" if rest else ""))
    try:
        context = _board_context(request, ward_id)
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("admin:ward_index")
    if request.htmx:
        # Marked, so the page's live script swaps in only this answer (never a login page).
        response = TemplateResponse(
            request, "patients/_bed_cards.html", context, headers={CARDS_MARKER: "1"}
        )
    else:
        response = admin.site.render(
            request,
            "patients/bed_board.html",
            {**context, "marker": CARDS_MARKER},
            title=f"Bed board: {context['ward']['name']}",
        )
    patch_vary_headers(response, ["HX-Request"])
    return response


@requires("clean_bed")
def clean_bed(request: HttpRequest, ward_id: str, bed: str) -> HttpResponse:
    """POST only: the bed being cleaned is marked clean (free); back to the board."""
    back = reverse("admin:bed_board", args=[ward_id])
    query = QueryDict(request.POST.get("query", "")).urlencode()  # the board's own filters
    if query:
        back += "?" + query
    if request.method != "POST":
        return redirect(back)
    try:
        mark_bed_clean(MarkBedClean(ward_id, bed), new_uow(), actor=actor_for(request.user))
    except DomainError as exc:
        messages.error(request, str(exc))
        if exc.http_status == 404:
            return redirect("admin:ward_index")
    else:
        messages.success(request, f"Bed {bed} is clean and free again.")
    return redirect(back)


# ------------------------------------------------------------------ the admit and transfer forms
NO_BED = ("", "— no bed yet —")


def offer(form: Any, where: Placement, *, refresh_url: str) -> None:
    """Give an admit or transfer form the department's wards and the ward's free beds; a
    changed department or ward re-renders those fields in place (htmx posts the form with
    ``refresh``; without scripts, the "Show free beds" button does the same)."""
    for name, choices in (
        ("department_id", where.departments),
        ("ward_id", where.wards),
        ("bed", [NO_BED, *((b, b) for b in where.free_beds)]),
    ):
        field = form.fields[name]
        if isinstance(field, forms.ChoiceField):
            field.choices = choices
        else:  # free text underneath: the use case judges it
            field.widget.choices = choices
    count = len(where.free_beds)
    form.fields["bed"].help_text = (
        f"{count} free bed{'s' if count != 1 else ''} on this ward; "
        "occupied beds and beds being cleaned are not offered."
    )
    live = {
        "hx-post": refresh_url,
        "hx-trigger": "change",
        "hx-target": "#bed-fields",
        "hx-select": "#bed-fields",
        "hx-swap": "outerHTML",
        "hx-include": "closest form",
        "hx-vals": '{"refresh": "1"}',
        "hx-sync": "this:replace",  # the latest choice wins
    }
    for name in ("department_id", "ward_id"):
        form.fields[name].widget.attrs.update(live)


def placement_from(request: HttpRequest, department: str = "", ward: str = "") -> Placement:
    """The placement the request asks for (POST, else GET), ``department``/``ward`` when it
    names none."""
    data = request.POST if request.method == "POST" else request.GET
    return placement(
        get_store(), data.get("department_id") or department, data.get("ward_id") or ward
    )


def refreshing(request: HttpRequest) -> bool:
    """True when the form was posted only to show another department's wards or beds."""
    return request.method == "POST" and "refresh" in request.POST


def initial_from(
    request: HttpRequest, where: Placement, fields: tuple[str, ...], **defaults: Any
) -> dict[str, Any]:
    """Initial values for a re-rendered form: what was entered (``fields``), the placement,
    and the bed asked for while it is free."""
    data = request.POST if request.method == "POST" else request.GET
    initial = {**defaults, **{f: data[f] for f in fields if f in data}}
    bed = data.get("bed", "")
    initial.update(
        department_id=where.department,
        ward_id=where.ward,
        bed=bed if bed in where.free_beds else "",
    )
    return initial
