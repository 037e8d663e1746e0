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

from cosmos_backend.uow import StaleWrite
from hisadmin.core import policy, tokens
from hisadmin.core.local_time import human_time
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import staff, use_cases
from patients.domain.errors import (
    DomainError,
    NotAdmitted,
    OrdersChanged,
    PossibleDuplicate,
    UnknownPatient,
)
from patients.domain.merges import LockState
from patients.domain.orders import (
    ACTIVE,
    ADMINISTRABLE,
    STATUS_LABELS,
    URGENCY_LABELS,
    OrderStatus,
    Urgency,
    actions_from,
)
from patients.domain.records import (
    ALLERGY_STATUS_LABELS,
    DISPOSITION_LABELS,
    REMOVAL_LABELS,
    SEVERITY_RANK,
    AllergyStatus,
    allergy_status,
    clean_mrn,
    identity_key,
    read_allergy,
)
from patients.pages import audit, merge_notices
from patients.pages import beds as beds_pages
from patients.pages.forms import AdmitForm, DischargeForm, FindForm, RegisterForm
from patients.pages.handover_notes import chart_handovers
from patients.pages.labels import label_allergy
from patients.pages.observation_chart import chart_observations
from patients.pages.scan import ScanFindForm
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
    if field is not None and form.fields[field].widget.is_hidden:
        field = None  # an error on a hidden field would show nowhere
    form.add_error(field, exc.saying(human_time))  # an instant in the hospital's time, in words


@requires("read")
def find_patient(request: HttpRequest) -> HttpResponse:
    """An MRN opens the chart (a point read); a name goes to the name search worklist. A
    wristband scanned (``scan``: the MRN a scanner typed) opens its patient's chart."""
    scanned = ScanFindForm(request.GET if "scan" in request.GET else None)
    form = FindForm(request.GET if "scan" not in request.GET and request.GET else None)
    if scanned.is_valid():
        found = _scanned_patient(scanned.cleaned_data["scan"])
        if found is not None:
            return redirect("admin:patient_chart", found["patientId"])
        scanned.add_error("scan", f"No patient has the MRN scanned "
                                  f"({scanned.cleaned_data['scan']}). Scan again, or type the "
                                  "MRN or family name below.")
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
        "form": form, "scan_form": scanned,
        "can_register": policy.allows(request.user, "register")}, title="Find a patient")


def _scanned_patient(text: str) -> dict[str, Any] | None:
    """The patient whose MRN a scanner typed; None when none has it (or it cannot be one)."""
    try:
        mrn = clean_mrn(text)
    except DomainError:
        return None
    return queries.by_mrn(get_store(), mrn)


@requires("register")
def register_patient(request: HttpRequest) -> HttpResponse:
    """Register; a possible duplicate (same names, case and accents aside, and birth date)
    is shown first, with a link to each chart and a "not the same person" checkbox."""
    form = RegisterForm(request.POST or None)
    candidates: list[dict[str, str]] = []
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        key = identity_key(data["family_name"], data["given_name"], data["birth_date"])
        # The tick counts for the name and birth date the duplicates were shown for only.
        ticked, checked_for = data.pop("confirm_not_duplicate"), data.pop("checked_for")
        confirmed = ticked and checked_for == key
        try:
            patient = use_cases.register_patient(use_cases.RegisterPatient(
                **data, confirm_not_duplicate=confirmed), new_uow(),
                actor=actor_for(request.user))
        except PossibleDuplicate as exc:
            candidates = exc.candidates
            form.ask_not_duplicate()
            form.data["checked_for"] = key
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, f"Registered {patient.display_name} with MRN {patient.mrn}.")
            return redirect("admin:patient_chart", patient.patient_id)
    return admin.site.render(request, "patients/register.html",
                             {"form": form, "submit": "Register", "candidates": candidates},
                             title="Register a patient")


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
    # The "older" link's token is bound to this patient: a mangled or foreign one is
    # BadPageToken, the 400 page (hisadmin.middleware), before the store reads it.
    scope = tokens.events_scope(patient_id)
    events, token = queries.events(get_store(), patient_id, page_size=50,
                                   continuation=tokens.open_page(events_from, scope=scope))
    token = tokens.sign_page(token, scope=scope)
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
    context["can_read_access_log"] = policy.allows(user, "read_access_log")
    context["can_print_wristband"] = policy.allows(user, "print_wristband")
    context["handover"] = chart_handovers(patient_id, user)
    context["obs"] = chart_observations(patient_id, user)
    if context["active_admission"] is not None and policy.allows(user, "discharge"):
        context["discharge_form"] = DischargeForm(
            initial={"etag": context["active_admission"]["etag"]})
    if p.get("mergedInto"):
        _read_only(context, p["mergedInto"], user)
    else:
        context["merged_here"] = merge_notices.undoable(patient_id, user)
    return admin.site.render(request, "patients/chart.html", context,
                             title=f"{p['familyName'].upper()}, {p['givenName']} ({p['mrn']})")


def _read_only(context: dict[str, Any], lock: dict[str, Any], user: Any) -> None:
    """A record merged (or being merged) into another takes no command: no action is
    offered, and the chart says where the patient's record is now (and, for records
    staff, how to undo the merge)."""
    for key in [k for k in context if k.startswith("can_") and k != "can_read_access_log"]:
        context[key] = False
    context.pop("discharge_form", None)
    context["handover"] = {**context["handover"], "can_write": False, "notes": [
        {**n, "can_acknowledge": False} for n in context["handover"]["notes"]]}
    context["obs"] = {**context["obs"], "can_record": False, "can_escalate": False,
                      "can_decide_scale": False}
    merged = lock.get("state") == LockState.MERGED
    context["merged_into"] = {"survivor_id": lock.get("survivorId"),
                              "survivor_mrn": lock.get("survivorMrn"), "merged": merged,
                              "can_undo": merged and policy.allows(user, "merge_records")}


@requires("admit")
def admit_patient(request: HttpRequest, patient_id: str) -> HttpResponse:
    """Department → its wards → the ward's free beds (a list here, or the bed board in pick
    mode); changing the department or ward re-renders those fields (see pages.beds.offer)."""
    context = _chart_context(patient_id)
    where = beds_pages.placement_from(request)
    if request.method == "POST" and "to_board" in request.POST:
        # Choosing on the board: what was typed rides along and comes back with the bed.
        kept = {name: request.POST.get(name, "") for name in beds_pages.KEPT_FIELDS}
        target = beds_pages.pick_url("admit", patient_id, where.department, where.ward, kept)
        return redirect(target or request.path)
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
        "form": form, "submit": "Admit", **context, "board_keeps": True,
        "board_url": beds_pages.pick_url("admit", patient_id, where.department, where.ward)},
        title="Admit patient")


def discharge_orders(patient_id: str, admission_id: str) -> list[dict[str, Any]]:
    """The stay's active orders, as discharge would cancel them: each named, its urgency and
    status in words, STAT and in-progress ones flagged (``stat``, ``in_progress``) and first."""
    listed = []
    for o in queries.orders(get_store(), patient_id, active_only=True):
        if o.get("admissionId") != admission_id:
            continue
        o["stat"] = o.get("urgency") == Urgency.STAT
        o["in_progress"] = o.get("status") == OrderStatus.IN_PROGRESS
        o["urgency_label"] = URGENCY_LABELS.get(o.get("urgency"), o.get("urgency") or "")
        o["status_label"] = STATUS_LABELS.get(o.get("status"), o.get("status") or "")
        listed.append(o)
    return sorted(listed, key=lambda o: (not (o["stat"] or o["in_progress"]), o["placedAt"]))


@requires("discharge")
def discharge_patient(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The discharge confirmation page: disposition, note, and every active order that will
    be cancelled. Only its own button (``confirm``) discharges; the chart's short form and a
    GET open it. The orders confirmed must still be the active ones (else shown again)."""
    context = _chart_context(patient_id)
    stay = context["active_admission"]
    if stay is None:
        messages.error(request, "This patient has no active admission to discharge.")
        return redirect("admin:patient_chart", patient_id)
    listed = discharge_orders(patient_id, stay["admissionId"])
    ids = " ".join(o["orderId"] for o in listed)
    shown = {"etag": stay["etag"], "orders": ids, "confirm": "1"}
    if request.method == "POST" and request.POST.get("confirm"):
        form = DischargeForm(request.POST)
        if form.is_valid():
            d = form.cleaned_data
            try:
                use_cases.discharge_patient(use_cases.DischargePatient(
                    patient_id=patient_id, disposition=d["disposition"], note=d["note"],
                    expected_version=d["etag"], cancel_order_ids=tuple(d["orders"].split())),
                    new_uow(), actor=actor_for(request.user))
            except (StaleWrite, OrdersChanged) as exc:
                # What the user typed stays; the page lists what is on record now, to confirm.
                form.add_error(None, STALE_MESSAGE if isinstance(exc, StaleWrite) else str(exc))
                form.data = {**form.data.dict(), **shown}
            except NotAdmitted as exc:
                messages.error(request, str(exc))
                return redirect("admin:patient_chart", patient_id)
            except DomainError as exc:
                _attach(form, exc)
            else:
                done = f"Discharged ({DISPOSITION_LABELS[d['disposition']]})."
                if listed:
                    done += " Cancelled: " + "; ".join(o["description"] for o in listed) + "."
                messages.success(request, done)
                return redirect("admin:patient_chart", patient_id)
    elif request.POST.get("disposition"):
        # Opened from the chart's short form: its choice is kept (and checked), nothing done.
        form = DischargeForm({**shown, "disposition": request.POST["disposition"]})
        form.is_valid()
    else:
        form = DischargeForm(initial=shown)
    return admin.site.render(request, "patients/discharge.html", {
        **context, "form": form, "cancel_orders": listed, "stay": stay,
    }, title="Discharge: review and confirm")
