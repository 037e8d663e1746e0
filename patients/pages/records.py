"""Admin-style pages for the clinical record. Thin: form → command → use case → message."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from cosmos_backend import errors as store_errors
from cosmos_backend.uow import StaleWrite
from hisadmin.core import policy
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import staff, use_cases
from patients.domain.errors import DomainError, UnknownPatient
from patients.domain.orders import ACTIVE, ADMINISTRABLE, actions_from
from patients.domain.records import (
    ALLERGY_STATUS_LABELS,
    REMOVAL_LABELS,
    AllergyStatus,
    allergy_status,
    read_allergy,
)
from patients.pages import audit
from patients.pages import beds as beds_pages
from patients.pages.forms import AdmitForm, DischargeForm, FindForm, RegisterForm
from patients.pages.labels import label_allergy
from patients.persistence import queries, reference

STALE_MESSAGE = ("This record was changed by someone else meanwhile. The page now shows the "
                 "current values; review them and submit again.")


def _report(request: HttpRequest, command: Callable[[], object], success: str) -> None:
    """Run a chart button's command; its outcome is a message on the page it returns to."""
    try:
        command()
    except StaleWrite:
        messages.error(request, STALE_MESSAGE)
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, success)


def _attach(form: forms.Form, exc: DomainError) -> None:
    field = exc.field if exc.field in form.fields else None
    form.add_error(field, str(exc))


@requires("read")
def find_patient(request: HttpRequest) -> HttpResponse:
    """An MRN opens the chart (a point read); a name goes to the name search worklist."""
    form = FindForm(request.GET or None)
    if form.is_valid():
        q = form.cleaned_data["q"].strip()
        if not any(ch.isdigit() for ch in q):
            return redirect(reverse("admin:worklist_search") + "?" + urlencode({"q": q}))
        found = queries.by_mrn(get_store(), q)
        if found is not None:
            return redirect("admin:patient_chart", found["patientId"])
        form.add_error("q", "No patient has this MRN. Check it, search by family name, or "
                            "register the patient.")
    return admin.site.render(request, "patients/find.html", {
        "form": form, "can_register": policy.allows(request.user, "register")},
        title="Find a patient")


@requires("register")
def register_patient(request: HttpRequest) -> HttpResponse:
    form = RegisterForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            patient = use_cases.register_patient(use_cases.RegisterPatient(**form.cleaned_data),
                                                new_uow(), actor=actor_for(request.user))
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, f"Registered {patient.display_name} with MRN {patient.mrn}.")
            return redirect("admin:patient_chart", patient.patient_id)
    return admin.site.render(request, "patients/form.html",
                             {"form": form, "submit": "Register"}, title="Register a patient")


SEVERITY_RANK = {"severe": 0, "moderate": 1, "mild": 2}


def _age(birth_date: str, today: date) -> int | None:
    try:
        born = date.fromisoformat(birth_date)
    except (TypeError, ValueError):
        return None
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def allergy_context(p: dict[str, Any]) -> dict[str, Any]:
    """The allergy part of a patient page: status, active allergies (severe first), removed
    ones (newest first, with the reason in words) and the "no known allergies" record."""
    allergies = [read_allergy(a) for a in p.get("allergies", [])]
    for a in allergies:
        a["removal_label"] = REMOVAL_LABELS.get(a.get("removalReason") or "", "")
        label_allergy(a)
    active = sorted((a for a in allergies if a["status"] == "active"),
                    key=lambda a: (SEVERITY_RANK.get(a["severity"], 3), a["substance"].casefold()))
    removed = sorted((a for a in allergies if a["status"] == "removed"),
                     key=lambda a: a.get("removedAt") or "", reverse=True)
    status = allergy_status(p.get("allergies", []), p.get("noKnownAllergies") or None)
    return {"status": str(status), "status_label": ALLERGY_STATUS_LABELS[status],
            "unknown": status == AllergyStatus.UNKNOWN,
            "none_known": status == AllergyStatus.NO_KNOWN_ALLERGIES,
            "nka": p.get("noKnownAllergies") or None, "active": active, "removed": removed}


def banner_context(chart: dict[str, Any], today: date | None = None) -> dict[str, Any]:
    """What the patient banner shows (templates/patients/_banner.html): who, where, and
    what they are allergic to. Ward and department by name, from reference data."""
    p, stay = chart["patient"], chart.get("active_admission")
    where = None
    if stay is not None:
        store = get_store()
        ward = reference.all_of(store, "Ward").get(stay["wardId"]) or {}
        department = reference.all_of(store, "Department").get(stay["departmentId"]) or {}
        where = {"ward": ward.get("name") or stay["wardId"], "bed": stay.get("bed"),
                 "department": department.get("name") or stay["departmentId"]}
    return {"patient_id": p["patientId"], "name": f"{p['familyName'].upper()}, {p['givenName']}",
            "mrn": p["mrn"], "birth_date": p["birthDate"], "sex": p.get("sex", "unknown"),
            "age": _age(p["birthDate"], today or datetime.now(UTC).date()), "where": where,
            "allergy": allergy_context(p)}


def _chart_context(patient_id: str, events_from: str | None = None) -> dict[str, Any]:
    """Every patient page's context: the chart, its audit page and the banner."""
    try:
        chart = queries.chart(get_store(), patient_id)
    except UnknownPatient as exc:
        raise Http404(str(exc)) from exc
    try:
        events, token = queries.events(get_store(), patient_id, page_size=50,
                                       continuation=events_from)
    except store_errors.InvalidRequest:  # a mangled "older" link: start from the newest
        events, token = queries.events(get_store(), patient_id, page_size=50)
    orders = queries.orders(get_store(), patient_id)
    for order in orders:
        order["is_active"] = order["status"] in ACTIVE
        order["actions"] = actions_from(order["status"])
        order["administrable"] = order["kind"] == "medication" and \
            order["status"] in ADMINISTRABLE
    audit.label_chart(get_store(), chart, orders, events)  # words for codes, names for ids
    banner = banner_context(chart)
    return {**chart, "events": events, "events_more": token, "orders": orders,
            "patient_etag": chart["patient"]["etag"], "banner": banner,
            "allergy": banner["allergy"]}


@requires("read")
def patient_chart(request: HttpRequest, patient_id: str) -> HttpResponse:
    context = _chart_context(patient_id, request.GET.get("events") or None)
    context["events_page"] = bool(request.GET.get("events"))
    p = context["patient"]
    user = request.user
    context["can_admit"] = policy.allows(user, "admit")
    context["can_order"] = policy.allows(user, "place_order")
    context["can_nurse"] = policy.allows(user, "administer")
    context["can_allergy"] = policy.allows(user, "add_allergy")
    context["can_remove_allergy"] = policy.allows(user, "remove_allergy")
    context["can_progress"] = policy.allows(user, "progress_order")
    if context["active_admission"] is not None and policy.allows(user, "discharge"):
        context["discharge_form"] = DischargeForm(
            initial={"etag": context["active_admission"]["etag"]})
    return admin.site.render(request, "patients/chart.html", context,
                             title=f"{p['familyName'].upper()}, {p['givenName']} ({p['mrn']})")


@requires("admit")
def admit_patient(request: HttpRequest, patient_id: str) -> HttpResponse:
    """Department → its wards → the ward's free beds (a list here, or the bed board in pick
    mode); changing the department or ward re-renders those fields (see pages.beds.offer)."""
    context = _chart_context(patient_id)
    where = beds_pages.placement_from(request)
    doctors = staff.clinicians()
    if request.method == "POST" and not beds_pages.refreshing(request):
        form = AdmitForm(request.POST, clinicians=doctors)
    else:
        form = AdmitForm(initial=beds_pages.initial_from(request, where, ("attending", "reason")),
                         clinicians=doctors)
    beds_pages.offer(form, where, refresh_url=request.path)
    if form.is_bound and form.is_valid():
        data = dict(form.cleaned_data)
        attending_id = data.pop("attending")
        try:
            use_cases.admit_patient(use_cases.AdmitPatient(
                patient_id=patient_id, attending_id=attending_id,
                attending_name=dict(doctors).get(attending_id, ""), **data),
                new_uow(), actor=actor_for(request.user))
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, "Admitted.")
            return redirect("admin:patient_chart", patient_id)
    return admin.site.render(request, "patients/bed_choice_form.html", {
        "form": form, "submit": "Admit", **context,
        "board_url": beds_pages.pick_url("admit", patient_id, where.department, where.ward)},
        title="Admit patient")


@requires("discharge")
def discharge_patient(request: HttpRequest, patient_id: str) -> HttpResponse:
    if request.method != "POST":
        return redirect("admin:patient_chart", patient_id)
    form = DischargeForm(request.POST)
    if form.is_valid():
        _report(request, lambda: use_cases.discharge_patient(use_cases.DischargePatient(
            patient_id=patient_id, disposition=form.cleaned_data["disposition"],
            expected_version=form.cleaned_data["etag"]), new_uow(),
            actor=actor_for(request.user)), "Discharged.")
    else:
        messages.error(request, "Choose a disposition.")
    return redirect("admin:patient_chart", patient_id)
