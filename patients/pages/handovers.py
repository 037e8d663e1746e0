"""Shift handover on pages: the SBAR form on the chart, acknowledging it, and the ward's
handover sheet for a shift to print (beds, patients, allergies, doses due, SBAR notes)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse

from hisadmin.core import access_log
from hisadmin.core.inputs import hospital_time_zone
from hisadmin.core.local_time import to_local
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.domain.errors import DomainError
from patients.domain.handovers import MAX_PART, SBAR, SBAR_LABELS, HandoverByOther, author
from patients.domain.mar import OPEN_STATUSES, STATUS_LABELS
from patients.domain.records import ALLERGY_STATUS_LABELS, AllergyStatus, allergy_names
from patients.domain.shifts import Shift, ShiftHours
from patients.pages import mar_shifts
from patients.pages.assignments import chosen_shift, current_shift, shift_label
from patients.pages.clinical import _attach, _form_page
from patients.pages.handover_notes import sbar_parts
from patients.persistence import assignments, beds, handovers, queries
from patients.use_cases.beds import ward_entry
from patients.use_cases.handovers import (
    AcknowledgeHandover,
    WriteHandover,
    shift_note,
)
from patients.use_cases.handovers import (
    acknowledge_handover as acknowledge,
)
from patients.use_cases.handovers import (
    write_handover as write,
)

HINTS = {"situation": "What is happening now: the patient's state this shift.",
         "background": "What brought them here and what matters from their history.",
         "assessment": "What you think: observations, trends, concerns.",
         "recommendation": "What the next shift should do, watch or follow up."}


class HandoverForm(forms.Form):
    situation = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=MAX_PART)
    background = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=MAX_PART)
    assessment = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=MAX_PART)
    recommendation = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}),
                                     max_length=MAX_PART)

    # the ``writtenAt`` of the version on record when the form was opened
    replaces = forms.CharField(widget=forms.HiddenInput, required=False, max_length=40)

    def __init__(self, *args: Any, other: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in SBAR:
            self.fields[name].label = SBAR_LABELS[name]
            self.fields[name].help_text = HINTS[name]
        if other is not None:  # a colleague's note: replacing it is a decision of its own
            self.fields["confirm_replace"] = forms.BooleanField(
                label=f"Replace {author(other)}'s handover",
                help_text=(f"{author(other)}'s text stays in the history on the chart. You "
                           "become the author of this shift's handover, and another nurse "
                           "acknowledges it."),
                error_messages={"required": f"Tick to confirm that yours replaces "
                                            f"{author(other)}'s handover, or go back."})


@requires("write_handover")
def write_handover(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The SBAR note for the shift on now: a new one, or the one on record opened with its
    text to correct it (a colleague's only after confirming, theirs kept in the history)."""
    try:
        current = shift_note(patient_id, new_uow())
    except DomainError as exc:
        if exc.http_status == 404:
            raise Http404(str(exc)) from exc
        current = None
    taken = current if current is not None and current.get("acknowledgedAt") else None
    if taken is not None:
        current = None  # taken over: it stays as it was read (the page says so)
    other = (current if current is not None
             and str(current.get("writtenBy")) != str(request.user.pk) else None)
    initial = {"replaces": (current or {}).get("writtenAt") or "",
               **{k: (current or {}).get(k) or "" for k in SBAR}}
    form = HandoverForm(request.POST or None, initial=initial, other=other)
    if request.method == "POST" and other is not None and (
            form.data.get("replaces") != other.get("writtenAt")):
        form = _seen(form, other)  # written or changed by a colleague since the form opened
    elif request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        replaces = data.pop("replaces") or None
        data.pop("confirm_replace", None)
        try:
            write(WriteHandover(patient_id, data, replaces=replaces), new_uow(),
                  actor=actor_for(request.user))
        except HandoverByOther:  # a colleague's version came in between the two reads
            return write_handover(_unconfirmed(request), patient_id)
        except DomainError as exc:
            if exc.http_status == 404:
                raise Http404(str(exc)) from exc
            _attach(form, exc)
        else:
            messages.success(request, "Handover written; the next nurse will acknowledge it.")
            return redirect("admin:patient_chart", patient_id)
    return _form_page(request, patient_id, form, "Write the handover (SBAR)", "Save handover",
                      template="patients/handover_form.html", on_record=current,
                      on_record_parts=sbar_parts(current) if other else None, taken=taken)


def _seen(form: HandoverForm, other: dict[str, Any]) -> HandoverForm:
    """The form bound again to what was typed, now replacing the colleague's version shown
    (its confirmation not yet given), with the reason said on top."""
    data = form.data.copy()
    data["replaces"] = other.get("writtenAt") or ""
    data.pop("confirm_replace", None)
    again = HandoverForm(data, other=other)
    again.is_valid()
    again.add_error(None, f"{author(other)} wrote this shift's handover meanwhile; it is shown "
                          "above. What you typed is kept below: confirm that it replaces "
                          "theirs, or go back.")
    return again


def _unconfirmed(request: HttpRequest) -> HttpRequest:
    """The same POST, its ``replaces`` emptied, so the page reads the note on record again
    and asks about it (:func:`_seen`)."""
    data = request.POST.copy()
    data["replaces"] = ""
    request.POST = data
    return request


@requires("acknowledge_handover")
def acknowledge_handover(request: HttpRequest, patient_id: str, handover_id: str
                         ) -> HttpResponse:
    """POST only: the incoming nurse has read the note; back to the chart."""
    if request.method == "POST":
        try:
            acknowledge(AcknowledgeHandover(patient_id, handover_id), new_uow(),
                        actor=actor_for(request.user))
        except DomainError as exc:
            if exc.http_status == 404:
                raise Http404(str(exc)) from exc
            messages.error(request, str(exc))
        else:
            messages.success(request, "Handover acknowledged: the patient is yours this "
                             "shift.")
    return redirect("admin:patient_chart", patient_id)


@requires("read_handover_sheet")
def handover_sheet(request: HttpRequest, ward_id: str) -> HttpResponse:
    """The ward's handover sheet for ``?shift=`` (default the shift on now): every occupied
    bed with its patient, allergies, the doses due in the shift and the shift's SBAR note.
    One query for the beds, then per patient the chart's reads and the note."""
    store = get_store()
    try:
        ward = {"code": ward_id, **ward_entry(store, ward_id)}
    except DomainError as exc:
        raise Http404(str(exc)) from exc
    shift = chosen_shift(request, ward)
    hours = ShiftHours.of_ward(ward)
    start, end = shift.bounds(hours, hospital_time_zone())
    sheet = assignments.read_sheet(store, ward_id, shift)
    rows = []
    for bed in beds.board(store, ward_id, ward.get("beds", [])):
        if bed.occupant is None:
            continue
        pid = bed.occupant.patient_id
        rows.append({"bed": bed.code, "patient_id": pid, "name": bed.occupant.display_name,
                     "nurse": (sheet.assignments.get(bed.code) or None),
                     "allergies": _allergies(pid),
                     "doses": _doses(pid, start, end),
                     "note": _note(pid, shift)})
    access_log.note_list(request, (r["patient_id"] for r in rows))
    return TemplateResponse(request, "patients/handover_sheet.html", {
        **admin.site.each_context(request), "ward": ward, "shift": shift.name,
        "shift_label": shift_label(shift, hours), "rows": rows,
        "printed_at": mar_shifts.local_now(), "now": shift == current_shift(ward),
        "title": f"Handover sheet: {ward.get('name', ward_id)}"})


def _allergies(patient_id: str) -> str:
    """The patient's active allergies in words, or what the record says instead."""
    patient = queries.patient(get_store(), patient_id)
    names = allergy_names(patient.get("allergies") or [])
    if names:
        return "; ".join(names)
    return ALLERGY_STATUS_LABELS[AllergyStatus(patient.get("allergyStatus") or "unknown")]


def _doses(patient_id: str, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """The scheduled dose times within the shift still open (not given, not recorded as
    not given), soonest first: ``{at, medication, status}``."""
    out = []
    for day in sorted({start.date(), (end - timedelta(minutes=1)).date()}):
        record = use_cases.medication_record(get_store(), patient_id, day,
                                             tz=hospital_time_zone())
        for order in record["orders"]:
            for slot in order.get("slots") or ():
                at = to_local(slot["scheduledFor"])
                if at is not None and start <= at < end and slot["status"] in OPEN_STATUSES:
                    out.append({"at": at, "medication": order.get("description") or "",
                                "status": STATUS_LABELS[slot["status"]]})
    return sorted(out, key=lambda d: d["at"])


def _note(patient_id: str, shift: Shift) -> dict[str, Any] | None:
    note = handovers.of_shift(get_store(), patient_id, shift.name)
    if note is not None:
        note["parts"] = sbar_parts(note)
    return note
