"""Observations on pages: the bedside form (the paper chart's order, the score shown as the
values are typed by ``patients/news2.js``, the wristband scan as on the dose forms), the
escalation of a score, the SpO2 scale 2 decision, and the chart's section."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone

from cosmos_backend.uow import StaleWrite
from hisadmin.core.inputs import hospital_time_zone
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients.domain import observations as rules
from patients.domain.errors import DomainError
from patients.domain.identity import WrongPatient
from patients.domain.observation_summary import ESCALATION_RESPONSES, scale_in_force
from patients.pages import scan
from patients.pages.observation_chart import row as _row
from patients.pages.observation_chart import stay_sets
from patients.pages.observation_svg import chart_svg
from patients.pages.records import _attach, _chart_context
from patients.persistence import observations as stored
from patients.use_cases import observations as use_cases

LOCAL_MINUTE = "%Y-%m-%dT%H:%M"
BLANK = [("", "—")]


def _number(label: str, unit: str, mode: str = "numeric") -> forms.CharField:
    """Text, not a number input: a decimal comma is typed as it is said, and the domain
    names what it refuses."""
    return forms.CharField(required=False, max_length=12, label=label, help_text=unit,
                           widget=forms.TextInput(attrs={
                               "inputmode": mode, "size": 5, "autocomplete": "off"}))


class ObservationForm(forms.Form):
    """The paper chart's order (RCP NEWS2 chart): A+B, C, D, E, then pain and a note."""

    scanned_id = scan.ScanField(
        required=False, label="Scan wristband", purpose="observations", autofocus=True,
        help_text=scan.SCAN_HELP + " Optional; a band scanned must be this patient's.")
    respiration_rate = _number("Respiration rate", "breaths/min")
    spo2 = _number("SpO2", "%")
    on_oxygen = forms.ChoiceField(required=False, label="Air or oxygen",
                                  choices=BLANK + [("air", "Air"), ("oxygen", "Oxygen")])
    oxygen_device = forms.ChoiceField(required=False, label="Oxygen device",
                                      choices=BLANK + list(rules.OXYGEN_DEVICES.items()))
    oxygen_flow_l_min = _number("Oxygen flow", "L/min", "decimal")
    systolic_bp = _number("Systolic BP", "mmHg")
    diastolic_bp = _number("Diastolic BP", "mmHg")
    pulse = _number("Pulse", "beats/min")
    consciousness = forms.ChoiceField(
        required=False, label="Consciousness (ACVPU)",
        choices=BLANK + [(k, f"{k}: {v}") for k, v in rules.CONSCIOUSNESS.items()])
    temperature = _number("Temperature", "°C", "decimal")
    pain_score = _number("Pain score", "0-10")
    comment = forms.CharField(required=False, max_length=rules.MAX_COMMENT, label="Comment",
                              widget=forms.Textarea(attrs={"rows": 2, "cols": 40}))
    taken_at = forms.DateTimeField(
        required=False, label="Taken at", input_formats=[LOCAL_MINUTE],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL_MINUTE),
        help_text="When the set was taken; not in the future.")


class EscalationForm(forms.Form):
    told_whom = forms.CharField(max_length=120, label="Who was told",
                                help_text="Name and role, e.g. Dr Patel, medical registrar.")
    response = forms.ChoiceField(choices=BLANK + list(ESCALATION_RESPONSES.items()),
                                 label="Response")
    detail = forms.CharField(required=False, max_length=1000, label="Plan or detail",
                             widget=forms.Textarea(attrs={"rows": 3}))
    told_at = forms.DateTimeField(
        required=False, label="Told at", input_formats=[LOCAL_MINUTE],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=LOCAL_MINUTE))


class ScaleForm(forms.Form):
    reason = forms.CharField(max_length=300, label="Reason",
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="For scale 2: the condition and the target (88-92 %).")


def _now_local() -> Any:
    return timezone.now().astimezone(hospital_time_zone()).replace(
        second=0, microsecond=0, tzinfo=None)


def bands_json(scale: int) -> str:
    """The scoring chart the page's script scores with: the domain's own tables."""
    return json.dumps({"scale": scale, "rr": rules.RR, "spo2_1": rules.SPO2_1,
                       "spo2_2_low": rules.SPO2_2_LOW, "spo2_2_oxygen": rules.SPO2_2_OXYGEN,
                       "systolic": rules.SYSTOLIC, "pulse": rules.PULSE,
                       "temperature": rules.TEMPERATURE,
                       "risks": {str(r): label for r, label in rules.RISK_LABELS.items()},
                       "responses": {str(r): text for r, text in rules.RESPONSES.items()}})


def _values(data: dict[str, Any]) -> dict[str, Any]:
    oxygen = {"air": False, "oxygen": True}.get(data.get("on_oxygen") or "")
    return {**{k: data.get(k) for k in rules.FIELDS}, "on_oxygen": oxygen}


@requires("record_observations")
def record(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The bedside form; saved, back to the chart with the score in words."""
    context = _chart_context(patient_id)
    form = ObservationForm(request.POST or None, initial={"taken_at": _now_local()})
    scan.expect(form, context["banner"]["mrn"])
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            saved, _ = use_cases.record_observations_again_on_a_race(
                use_cases.RecordObservations(patient_id, _values(data), data["taken_at"],
                                             data["scanned_id"]), new_uow,
                actor=actor_for(request.user))
        except WrongPatient as exc:
            _attach(form, exc)
            scan.clear(form)
        except DomainError as exc:
            _attach(form, exc)
        except StaleWrite:  # still racing after the retries: nothing saved, the values kept
            form.add_error(None, "The patient's record kept changing while this set was "
                           "saved, so it was not saved. Check the values and save again.")
        else:
            messages.success(request, said(saved))
            return redirect("admin:patient_chart", patient_id)
    summary = stored.summary(get_store(), patient_id)
    scale = scale_in_force(summary)
    return admin.site.render(request, "patients/observations_form.html", {
        **context, "form": form, "submit": "Save observations", "bands": bands_json(scale),
        "scale": scale, "scale2": (summary or {}).get("scale2")},
        title="Record observations")


def said(observation: dict[str, Any]) -> str:
    """The set's score in words, as the message after saving says it."""
    news2 = observation.get("news2") or {}
    if not news2.get("complete"):
        missing = ", ".join(rules.LABELS[m].lower() for m in news2.get("missing") or ())
        return f"Observations recorded: incomplete set, not scored (missing {missing})."
    risk = rules.Risk(news2["risk"])
    flags = " ".join(f["message"] for f in observation.get("flags") or ())
    return (f"Observations recorded: NEWS2 {news2['score']}, "
            f"{rules.RISK_LABELS[risk].lower()} risk. {rules.RESPONSES[risk]} {flags}").strip()


@requires("escalate_observations")
def escalate(request: HttpRequest, patient_id: str, observation_id: str) -> HttpResponse:
    context = _chart_context(patient_id)
    observation = stored.one(get_store(), patient_id, observation_id)
    if observation is None:
        raise Http404("No such observation set.")
    form = EscalationForm(request.POST or None, initial={"told_at": _now_local()})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            use_cases.escalate(use_cases.EscalateObservations(
                patient_id, observation_id, data["told_whom"], data["response"],
                data["detail"], data["told_at"]), new_uow(), actor=actor_for(request.user))
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, "Escalation recorded.")
            return redirect("admin:patient_chart", patient_id)
    return admin.site.render(request, "patients/observations_escalate.html", {
        **context, "form": form, "submit": "Record escalation", "set": _row(observation)},
        title="Record an escalation")


@requires("decide_spo2_scale")
def decide_scale(request: HttpRequest, patient_id: str) -> HttpResponse:
    """Start SpO2 scale 2, or end it when it is in force (a clinician, with a reason)."""
    context = _chart_context(patient_id)
    summary = stored.summary(get_store(), patient_id)
    in_force = scale_in_force(summary) == 2
    form = ScaleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            use_cases.decide_scale(use_cases.DecideScale(
                patient_id, not in_force, form.cleaned_data["reason"]), new_uow(),
                actor=actor_for(request.user))
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, "SpO2 scale 1 again." if in_force else
                             "SpO2 scale 2 in force: target 88-92 %.")
            return redirect("admin:patient_chart", patient_id)
    return admin.site.render(request, "patients/observations_scale.html", {
        **context, "form": form, "in_force": in_force,
        "decision": (summary or {}).get("scale2"),
        "submit": "End scale 2" if in_force else "Start scale 2"},
        title="End SpO2 scale 2" if in_force else "SpO2 scale 2 (target 88-92 %)")


@requires("read")
def chart(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The stay's observation chart (the active admission's sets; none: every set): SVG
    blocks of a day each, the table of values under them; ``?print=1`` without the site's
    navigation, to print."""
    context = _chart_context(patient_id)
    stay = context.get("active_admission")
    rows = stay_sets(patient_id, stay["admissionId"] if stay else None)
    summary = stored.summary(get_store(), patient_id) or {}
    data = {**context, "rows": rows, "svgs": chart_svg(rows),
            "labels": [rules.LABELS[n] for n in rules.SCORED],
            "scale2": summary.get("scale2"), "printed_at": timezone.now()}
    if request.GET.get("print"):
        return TemplateResponse(request, "patients/observations_print.html", {
            **data, "title": "Observation chart"})
    return admin.site.render(request, "patients/observations_chart.html", data,
                             title="Observation chart")
