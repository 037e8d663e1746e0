"""The "Medication record" page (the day's MAR grid) and its small form to record a dose.

The grid (scheduled and PRN medication) re-fetches itself with htmx every
:data:`MAR_REFRESH_SECONDS`, as the bed boards and worklists do (``freshness.js``): a MAR
left open at the nurses' station shows a dose recorded by a colleague within seconds, instead
of a "Due" that invites a second dose.
"""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers

from cosmos_backend.uow import StaleWrite
from hisadmin.core import policy
from hisadmin.core.inputs import CheckedForm, hospital_time_zone, hospital_today, safe_next
from hisadmin.core.local_time import human_time
from hisadmin.core.numbers import DecimalText, decimal_words
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.domain import dose_times, mar
from patients.domain.checks import CHECK_LABELS
from patients.domain.errors import DomainError, OrderConflicts
from patients.domain.identity import IDENTITY_LABELS, WrongPatient
from patients.domain.orders import ADMINISTRABLE, STATUS_LABELS
from patients.domain.units import DOSE_DIMENSIONS
from patients.pages import guard_warnings, labels, mar_shifts, scan
from patients.pages.records import STALE_MESSAGE, _attach, _chart_context
from patients.persistence import queries, reference
from patients.use_cases.administrations import SlotRequired

MAR_REFRESH_SECONDS = 10
MAR_MARKER = "X-Mar"  # the response header of the grid's refresh (freshness.js)


def _day(value: str | None) -> date | None:
    """The ``date`` query parameter (YYYY-MM-DD, 1900 to 2100), None when absent; a
    malformed or out-of-range day is the 400 page (BadRequest), never a 500."""
    if not value:
        return None
    try:
        return mar.parse_day(value)
    except mar.BadDay as exc:
        raise BadRequest(str(exc)) from None


def _local(moment: str | datetime | None) -> datetime | None:
    """An instant in the hospital's time (MAR days and slots are the hospital's)."""
    return (mar.parse_instant(moment).astimezone(hospital_time_zone())
            if moment else None)


def _entry_view(e: dict[str, Any], people: dict[str, str] | None = None
                ) -> dict[str, Any]:
    """An administration as the page shows it (local times, the reason by name, who by their
    full name from ``people``: ``by_name``, each guard overridden: ``overrides_shown``, how
    identity was confirmed: ``identity_label``, when it was written down: ``recorded``)."""
    n = labels.Names(people=people or {})
    overridden = labels.dose_overrides(e)
    return {**e, "status_label": mar.STATUS_LABELS.get(mar.entry_status(e), ""),
            "by_name": n.person(e.get("by")),
            "overrides_shown": [{**o, "label": CHECK_LABELS.get(o.get("check", ""), ""),
                                 "by_name": n.person(o.get("by"))} for o in overridden],
            "when": _local(e.get("administeredAt") or e.get("at")),
            "recorded": _local(e.get("at")),
            "identity_label": IDENTITY_LABELS.get(e.get("identityConfirmedBy") or "", ""),
            "reason_label": mar.NOT_GIVEN_REASONS.get(e.get("reason") or "", "")}


def _grid(record: dict[str, Any]
          ) -> tuple[list[str], list[dict[str, Any]], list[dict], list[dict[str, Any]]]:
    """The day's columns (local HH:MM), scheduled rows (one cell per column), PRN rows, and
    the scheduled orders with no dose time on the day (a course that ends before its first
    time, or one whose stored times cannot be read: its ``dataErrors``), listed on their own
    so that their notice shows even when no shift has a column to draw them in."""
    rows, prn, untimed = [], [], []
    columns: set[str] = set()
    # who recorded each dose or overrode its guards, by full name (one query for the day)
    people = labels.full_names(
        u for o in record["orders"] for a in o["administrations"]
        for u in (a.get("by"), *(x.get("by") for x in labels.dose_overrides(a))))
    for o in record["orders"]:
        o["administrable"] = o["status"] in ADMINISTRABLE
        o["status_label"] = STATUS_LABELS.get(o["status"], o["status"])
        o["entries"] = [_entry_view(e, people) for e in o["administrations"]]
        if mar.is_prn(o):
            prn.append(o)
            continue
        if not o["slots"]:
            untimed.append(o)
            continue
        cells: dict[str, list[dict[str, Any]]] = {}
        for slot in o["slots"]:
            local = _local(slot["scheduledFor"])
            assert local is not None
            column = local.strftime("%H:%M")
            columns.add(column)
            cells.setdefault(column, []).append({
                **slot, "label": mar.STATUS_LABELS[slot["status"]], "time": local,
                "entry": _entry_view(slot["administration"], people) if slot["administration"]
                else None, "recordable": o["administrable"] and
                slot["status"] in mar.OPEN_STATUSES})
        rows.append({**o, "cells": cells})
    ordered = sorted(columns)
    for row in rows:
        row["cells"] = [row["cells"].get(c, []) for c in ordered]
    return ordered, rows, prn, untimed


def _live_url(request: HttpRequest, day: date) -> str:
    """The grid's refresh address: this page with the day pinned, so a page opened without
    ``?date=`` (today) keeps showing that day after midnight, as its heading says."""
    query = request.GET.copy()
    query["date"] = day.isoformat()
    return f"{request.path}?{query.urlencode()}"


@requires("read")
def medication_record(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The day's MAR (``?date=YYYY-MM-DD``, default today); an htmx GET (the grid's timed
    refresh) is answered with the grid alone, marked with :data:`MAR_MARKER`."""
    started = time.perf_counter()
    context = _chart_context(patient_id)
    day = _day(request.GET.get("date")) or hospital_today()
    record = use_cases.medication_record(get_store(), patient_id, day,
                                         tz=hospital_time_zone())
    columns, rows, prn, untimed = _grid(record)
    context = {
        **context, "day": day, "today": hospital_today(), "columns": columns,
        "rows": rows, "prn": prn, "untimed": untimed,
        "can_record": policy.allows(request.user, "administer"),
        "previous_day": (day - timedelta(days=1)).isoformat(),
        "next_day": (day + timedelta(days=1)).isoformat(),
        "time_zone": str(hospital_time_zone()), **mar_shifts.context(
            columns, rows, day, context.get("active_admission")),
        "reasons": mar.NOT_GIVEN_REASONS,
        "refresh": MAR_REFRESH_SECONDS, "live_url": _live_url(request, day),
        "loaded_at": time.time(), "query_ms": (time.perf_counter() - started) * 1000}
    if request.htmx and request.method == "GET":
        # Marked, so the page's live script swaps in only this answer (never a login page).
        response: HttpResponse = TemplateResponse(
            request, "patients/_mar_grid.html", context, headers={MAR_MARKER: "1"})
    else:
        response = admin.site.render(request, "patients/mar.html",
                                     {**context, "marker": MAR_MARKER},
                                     title=f"Medication record — {day:%a %d %b %Y}")
    patch_vary_headers(response, ["HX-Request"])
    return response


class RecordDoseForm(CheckedForm):
    scanned_id = scan.dose_scan_field()
    # left out (a post from an older page): given
    status = forms.ChoiceField(choices=[("given", "Given"), ("not_given", "Not given")],
                               widget=forms.RadioSelect, initial="given", required=False)
    dose = DecimalText(required=False, min_value=0.001, max_digits=10, decimal_places=3,
                       help_text="Given: at most the ordered dose; a decimal point or comma "
                                 "(0.5 or 0,5).",
                       error_messages={"min_value": "The dose given must be more than 0."})
    unit = forms.ChoiceField(required=False)
    administered_at = forms.DateTimeField(
        required=False, label="Given at", input_formats=["%Y-%m-%dT%H:%M"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Given: when, not in the future.")
    reason = forms.ChoiceField(required=False, label="Reason not given",
                               choices=[("", "—"), *mar.NOT_GIVEN_REASONS.items()])
    reason_detail = forms.CharField(required=False, max_length=300, label="Other reason")
    note = forms.CharField(required=False, max_length=300)
    slot_id = forms.CharField(required=False, widget=forms.HiddenInput)
    etag = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, units: list[tuple[str, str]], conflict: str = "",
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["unit"].choices = [("", "—"), *units]
        self.conflict = conflict
        self.fields["unit"].help_text = "Given: the unit of the dose, as prescribed or another."
        if conflict:
            self.fields["prn_override"] = forms.CharField(
                max_length=500, label="Reason to give it sooner",
                help_text="Required to record this dose inside the least interval.")


    def clean_status(self) -> str:
        return self.cleaned_data.get("status") or "given"


def _dose_units() -> list[tuple[str, str]]:
    units = reference.all_of(get_store(), "Unit")
    return [(code, u.get("name") or code) for code, u in units.items()
            if u.get("dimension") in DOSE_DIMENSIONS and u.get("active", True)]


def offer_slots(form: forms.Form, candidates: list[dict[str, str]]) -> None:
    """Ask which dose time a dose answers: ``slot_id`` becomes a choice of the open slots
    (none open: the field goes, so the error shows above the form)."""
    # cleaning bound the old field (Django caches bound fields): drop it, or the page would
    # draw the hidden field and not the choice
    form._bound_fields_cache.pop("slot_id", None)
    if not candidates:
        form.fields.pop("slot_id", None)
        return
    form.fields["slot_id"] = forms.ChoiceField(
        label="Dose time", widget=forms.RadioSelect,
        choices=[(c["slot_id"], f"{human_time(c['scheduled_for'])} — "
                  f"{mar.STATUS_LABELS.get(c['status'], c['status'])}") for c in candidates],
        help_text="Which dose time this dose answers.")


def administer_asking(form: forms.Form, command: use_cases.Administer, *, actor: Any
                      ) -> Any:
    """Run :func:`use_cases.administer`; when the nurse must say which dose time, the form
    offers the candidates (and the error lands on that choice)."""
    try:
        return use_cases.administer(command, new_uow(), actor=actor)
    except SlotRequired as exc:
        offer_slots(form, exc.candidates)
        raise


def _named_slot(order_id: str, value: str) -> tuple[str, datetime | None]:
    """A slot given in a link or a form: a slot id, or a dose time (old links) turned into
    one; ("", None) for anything else."""
    try:
        named, moment = dose_times.parse_slot_id(value)
        if named == order_id:
            return value, moment
    except ValueError:
        pass
    if value and _valid_instant(value):
        moment = mar.parse_instant(value)
        return mar.slot_id(order_id, moment), moment
    return "", None


@requires("administer")
def record_dose(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    """Record a dose from the MAR or Medications due; back to the day's MAR."""
    return record_form(request, patient_id, order_id)


def _hours(order: dict[str, Any]) -> float:
    hours = order.get("frequencyHours")
    if hours is None:  # older orders: their frequency's interval
        frequency = reference.all_of(get_store(), "Frequency").get(order.get("frequency") or "")
        hours = (frequency or {}).get("hours")
    return float(hours or 0)


def _due_now(order: dict[str, Any]) -> tuple[datetime | None, datetime | None]:
    """(the open dose time due now, else None; the next open one after now, else None) of a
    scheduled order: what the form names before anything is typed."""
    if mar.is_prn(order):
        return None, None
    now, hours = timezone.now(), _hours(order)
    due = mar.due_slot(order, hours, now)
    if due is not None:
        return due, None
    later = mar.open_slots(order, hours, now, now + timedelta(days=31))
    return None, later[0] if later else None


def _recorded_words(order: Any, status: str, scanned: bool) -> str:
    """The confirmation of a dose, in words: what, how much, when, for which dose time."""
    entry = order.administrations[-1] if getattr(order, "administrations", None) else {}
    at = _local(entry.get("administeredAt"))
    slot = _local(entry.get("scheduledFor"))
    for_slot = f" (the {slot:%H:%M} dose)" if slot else ""
    if status == "given":
        said = (f"Dose given recorded: {decimal_words(entry.get('dose'))} "
                f"{entry.get('unit') or ''} at {at:%H:%M}{for_slot}." if at
                else "Dose given recorded.")
    else:
        reason = mar.NOT_GIVEN_REASONS.get(entry.get("reason") or "", "")
        said = f"Dose not given recorded{for_slot}" + (f": {reason}." if reason else ".")
    return said + (" Identity confirmed by scan." if scanned else "")


def record_form(request: HttpRequest, patient_id: str, order_id: str, *,
                back: str = "", back_label: str = "Back to the medication record"
                ) -> HttpResponse:
    """The one form that records a dose, wherever it is opened (the MAR, Medications due,
    the chart's and the order's Administer): given (dose, unit from the list, when) or not
    given (why), for the dose time it names; back to ``back`` (default the day's MAR)."""
    context = _chart_context(patient_id)
    order = next((o for o in context["orders"] if o["orderId"] == order_id
                  and o["kind"] == "medication"), None)
    if order is None:
        raise Http404("No such medication order on this patient.")
    slot, moment = _named_slot(order_id, request.POST.get("slot_id")
                               or request.GET.get("slot") or "")
    next_slot, answered = None, None
    if not slot and request.method != "POST":
        moment, next_slot = _due_now(order)
        slot = mar.slot_id(order_id, moment) if moment else ""
        near = (mar.answered_near(order.get("administrations") or [], timezone.now())
                if moment is None else None)
        if near is not None:  # a dose time around now already answered: say when
            answered = {**_entry_view(dict(near[1])), "slot": _local(near[0])}
    slot_time = _local(moment)
    if slot_time is not None:
        try:
            mar.check_day(slot_time.date())
        except mar.BadDay as exc:
            raise BadRequest(str(exc)) from None
    day = (slot_time.date() if slot_time else _day(request.GET.get("date"))) or (
        hospital_today())
    mar_page = reverse("admin:patient_mar", args=[patient_id]) + "?" + urlencode(
        {"date": day.isoformat()})
    listed = safe_next(request)  # e.g. Medications due: back to the list
    if listed:
        back, back_label = listed, "Back to the list"
    else:
        back = back or mar_page
    units = _dose_units()
    conflict = request.POST.get("conflict", "") if request.method == "POST" else ""
    data_in = request.POST.copy() if request.method == "POST" else None
    if data_in is not None:
        data_in["slot_id"] = slot
    form = RecordDoseForm(data_in, units=units, conflict=conflict, initial={
        "status": "given", "dose": order.get("dose"), "unit": order.get("unit"),
        "administered_at": timezone.now().astimezone(hospital_time_zone()).replace(
            second=0, microsecond=0, tzinfo=None),
        "slot_id": slot, "etag": order["etag"]})
    scan.expect(form, context["banner"]["mrn"])
    guards = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        at = data["administered_at"]
        signature = guard_warnings.dose_signature(order_id, data)
        overrides = guard_warnings.given_reasons(request.POST, signature)
        try:
            done = administer_asking(form, use_cases.Administer(
                patient_id, order_id, data["dose"], data["unit"] or "", data["note"],
                data["etag"], status=data["status"],
                administered_at=at if data["status"] == "given" and at else None,
                reason=data["reason"], reason_detail=data["reason_detail"],
                slot_id=data.get("slot_id") or "", overrides=overrides,
                scanned_id=data["scanned_id"]),
                actor=actor_for(request.user))
        except OrderConflicts as exc:  # each guard with its own reason box
            guards = guard_warnings.refused(
                exc, signature, overrides,
                answered=request.POST.get("signature") == signature)
        except WrongPatient as exc:  # on the scan field; nothing recorded
            _attach(form, exc)
            scan.clear(form)
        except StaleWrite:
            form.add_error(None, STALE_MESSAGE)
            data = form.data.copy()
            data["etag"] = queries.order(get_store(), patient_id, order_id)["etag"]
            form.data = data
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, _recorded_words(done, data["status"],
                                                      bool(data["scanned_id"])))
            return redirect(back)
    return admin.site.render(request, "patients/mar_record.html", {
        **context, "form": form, "submit": "Record anyway" if guards else "Record",
        "order": order, "slot_time": slot_time, "next_slot": _local(next_slot),
        "answered": answered, "first_dose": not order.get("administrations"),
        "ordered_dose": decimal_words(order.get("dose")) if order.get("dose") else "",
        "back": back, "back_label": back_label, "guards": guards},
        title=f"Record a dose: {order['description']}")


def _valid_instant(value: str) -> bool:
    try:
        mar.parse_instant(value)
    except ValueError:
        return False
    return True
