"""Pages for demographics, allergies, transfers and orders (admin chrome, thin adapters)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from cosmos_backend.uow import StaleWrite
from hisadmin.core import policy
from hisadmin.core.local_time import human_date
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.domain.errors import DomainError, OrderConflicts, UnknownPatient
from patients.domain.orders import STATUS_LABELS
from patients.domain.records import SEX_LABELS
from patients.pages import beds as beds_pages
from patients.pages.clinical_forms import (
    ORDER_FORMS,
    AllergyForm,
    CancelOrderForm,
    ConfirmForm,
    DemographicsForm,
    OverrideForm,
    RemoveAllergyForm,
    TransferForm,
)
from patients.pages.mar import record_form
from patients.pages.records import STALE_MESSAGE, _attach, _chart_context, _report
from patients.persistence import queries, reference


def _form_page(request: HttpRequest, patient_id: str, form: Any, title: str,
               submit: str, *, template: str = "patients/form.html",
               **extra: Any) -> HttpResponse:
    context = {**_chart_context(patient_id), "form": form, "submit": submit, **extra}
    return admin.site.render(request, template, context, title=title)


def _run(request: HttpRequest, form: Any, action: Callable[[], object], done: str,
         current_etag: Callable[[], str | None] | None = None) -> bool:
    """Call the use case; domain errors land on their fields, a stale etag on the form.

    On a stale etag the form is re-bound to the version stored now (``current_etag``), so the
    page shows the current record and a resubmit is an informed decision, never a blind one.
    """
    try:
        action()
    except StaleWrite:
        form.add_error(None, STALE_MESSAGE)
        if current_etag is not None:
            rebind_etag(form, current_etag())
        return False
    except DomainError as exc:
        _attach(form, exc)
        return False
    messages.success(request, done)
    return True


def rebind_etag(form: Any, etag: str | None) -> None:
    data = form.data.copy()
    data["etag"] = etag or ""
    form.data = data


def _patient_etag(patient_id: str) -> Callable[[], str | None]:
    return lambda: queries.patient(get_store(), patient_id)["etag"]


CONFLICT_MESSAGE = ("This record was changed by someone else meanwhile. What you typed is kept "
                    "below, next to what is on record now; save again to apply your change.")
DEMOGRAPHICS = (("given_name", "givenName", "Given name"),
                ("family_name", "familyName", "Family name"),
                ("birth_date", "birthDate", "Date of birth"), ("sex", "sex", "Sex"))


def _demographics_side_by_side(yours: dict[str, Any], now: dict[str, Any]
                               ) -> list[dict[str, Any]]:
    """Each field as the user typed it and as it is on record now (differing ones marked)."""
    def shown(field: str, value: Any) -> str:
        text = value.isoformat() if hasattr(value, "isoformat") else str(value or "")
        if field == "birth_date":
            return human_date(text, weekday=False)
        return SEX_LABELS.get(text, text) if field == "sex" else text

    rows = []
    for field, stored, label in DEMOGRAPHICS:
        mine, theirs = shown(field, yours.get(field)), shown(field, now.get(stored))
        rows.append({"field": field, "label": label, "yours": mine, "now": theirs,
                     "differs": mine != theirs})
    return rows


@requires("update_demographics")
def edit_demographics(request: HttpRequest, patient_id: str) -> HttpResponse:
    """Correct demographics. A stale etag keeps what the user typed, shows it beside what is
    on record now, and re-binds the form to the current version: a second submit applies it."""
    try:
        c = queries.patient(get_store(), patient_id)
    except UnknownPatient as exc:
        raise Http404(str(exc)) from exc
    current = {"given_name": c["givenName"], "family_name": c["familyName"],
               "birth_date": c["birthDate"], "sex": c["sex"], "etag": c["etag"]}
    form = DemographicsForm(request.POST or None, initial=current)
    conflict = None
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        etag = data.pop("etag")
        try:
            use_cases.update_demographics(use_cases.UpdateDemographics(
                patient_id=patient_id, expected_version=etag, **data), new_uow(),
                actor=actor_for(request.user))
        except StaleWrite:
            now = queries.patient(get_store(), patient_id)  # what won, as stored now
            conflict = _demographics_side_by_side(data, now)
            form.add_error(None, CONFLICT_MESSAGE)
            rebind_etag(form, now["etag"])
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, "Demographics saved.")
            return redirect("admin:patient_chart", patient_id)
    return _form_page(request, patient_id, form, "Correct demographics", "Save",
                      template="patients/demographics.html", conflict=conflict)


@requires("add_allergy")
def add_allergy(request: HttpRequest, patient_id: str) -> HttpResponse:
    context = _chart_context(patient_id)
    form = AllergyForm(request.POST or None, initial={"etag": context["patient"]["etag"]},
                       allergens=reference.all_of(get_store(), "Allergen"))
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        etag = data.pop("etag")
        if _run(request, form, lambda: use_cases.add_allergy(use_cases.AddAllergy(
                patient_id=patient_id, expected_version=etag, **data), new_uow(),
                actor=actor_for(request.user)), "Allergy recorded.", _patient_etag(patient_id)):
            return redirect("admin:patient_chart", patient_id)
    return _form_page(request, patient_id, form, "Record an allergy", "Record")


@requires("add_allergy")
def record_no_known_allergies(request: HttpRequest, patient_id: str) -> HttpResponse:
    """A confirmation page; its POST records "no known allergies" (an explicit act)."""
    context = _chart_context(patient_id)
    form = ConfirmForm(request.POST or None, initial={"etag": context["patient"]["etag"]})
    if request.method == "POST" and form.is_valid() and _run(
            request, form, lambda: use_cases.record_no_known_allergies(
                use_cases.RecordNoKnownAllergies(patient_id, form.cleaned_data["etag"]),
                new_uow(), actor=actor_for(request.user)),
            "No known allergies recorded.", _patient_etag(patient_id)):
        return redirect("admin:patient_chart", patient_id)
    return admin.site.render(request, "patients/allergy_confirm.html",
                             {**context, "form": form, "confirm": "none"},
                             title="Record no known allergies")


@requires("remove_allergy")
def remove_allergy(request: HttpRequest, patient_id: str, allergy_id: str) -> HttpResponse:
    """A confirmation page showing the allergy; its POST removes it with a reason (the
    allergy stays in the record's history)."""
    context = _chart_context(patient_id)
    allergy = next((a for a in context["allergy"]["active"] if a["allergyId"] == allergy_id),
                   None)
    if allergy is None:
        messages.error(request, "That allergy is not on the record (it may have been removed "
                                "meanwhile); reload the chart.")
        return redirect("admin:patient_chart", patient_id)
    form = RemoveAllergyForm(request.POST or None, initial={"etag": context["patient"]["etag"]})
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        if _run(request, form, lambda: use_cases.remove_allergy(use_cases.RemoveAllergy(
                patient_id, allergy_id, d["etag"], reason=d["reason"], detail=d["detail"]),
                new_uow(), actor=actor_for(request.user)),
                f"Allergy to {allergy['substance']} removed.", _patient_etag(patient_id)):
            return redirect("admin:patient_chart", patient_id)
    return admin.site.render(request, "patients/allergy_confirm.html",
                             {**context, "form": form, "confirm": "remove", "allergy": allergy},
                             title=f"Remove the allergy to {allergy['substance']}?")


@requires("transfer")
def transfer(request: HttpRequest, patient_id: str) -> HttpResponse:
    """Like admitting: department → its wards → the ward's free beds (or the bed board)."""
    context = _chart_context(patient_id)
    active = context["active_admission"]
    if active is None:
        messages.error(request, "Only an admitted patient can be transferred.")
        return redirect("admin:patient_chart", patient_id)
    where = beds_pages.placement_from(request, active["departmentId"], active["wardId"])
    if request.method == "POST" and not beds_pages.refreshing(request):
        form = TransferForm(request.POST)
    else:
        form = TransferForm(initial=beds_pages.initial_from(request, where, (),
                                                            etag=active["etag"]))
    beds_pages.offer(form, where, refresh_url=request.path)
    if form.is_bound and form.is_valid():
        d = form.cleaned_data
        if _run(request, form, lambda: use_cases.transfer_patient(use_cases.TransferPatient(
                patient_id, d["ward_id"], d["bed"], d["etag"]), new_uow(),
                actor=actor_for(request.user)), "Transferred.", lambda: active["etag"]):
            return redirect("admin:patient_chart", patient_id)
    return _form_page(request, patient_id, form, "Transfer", "Transfer",
                      template="patients/bed_choice_form.html",
                      board_url=beds_pages.pick_url("transfer", patient_id, where.department,
                                                    where.ward))


@requires("place_order")
def place_order(request: HttpRequest, patient_id: str, kind: str) -> HttpResponse:
    if kind not in ORDER_FORMS:
        raise Http404("Unknown order kind.")
    form_class, title = ORDER_FORMS[kind]
    store = get_store()
    choices = {t: reference.choices(store, t) for t in reference.TYPES}
    choices["Unit"] = reference.dose_unit_choices(store)  # no lab units (g/L…) for a dose
    form = form_class(request.POST or None, choices=choices)
    overrides = OverrideForm()
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        signature = _order_signature(kind, data)
        # Reasons count only for the order they were given for: a changed order is checked
        # (and warned about) afresh.
        given = OverrideForm(request.POST)
        reasons = given.reasons() if request.POST.get("signature") == signature else {}
        try:
            placed = use_cases.place_order(use_cases.PlaceOrder(
                patient_id=patient_id, kind=kind, overrides=reasons, **data), new_uow(),
                actor=actor_for(request.user))
        except OrderConflicts as exc:
            overrides = _refused(exc, signature, reasons,
                                 answered=request.POST.get("signature") == signature)
        except StaleWrite:
            form.add_error(None, STALE_MESSAGE)
        except DomainError as exc:
            _attach(form, exc)
        else:
            # the dose read back in words: a misread number shows here, not at the bedside
            messages.success(request, f"{title}: order placed — {placed.description}.")
            return redirect("admin:patient_chart", patient_id)
    hints = _medication_hints(store) if kind == "medication" else None
    return _form_page(request, patient_id, form, title,
                      "Override and place order" if overrides.shown else "Place order",
                      template="patients/order_form.html", overrides=overrides,
                      medication_hints=hints, medication=kind == "medication")


def _order_signature(kind: str, data: dict[str, Any]) -> str:
    """What the order asks for, as a short digest (the note aside)."""
    said = json.dumps({"kind": kind, **{k: str(v) for k, v in data.items() if k != "note"}},
                      sort_keys=True)
    return hashlib.sha256(said.encode()).hexdigest()[:20]


def _refused(exc: OrderConflicts, signature: str, reasons: dict[str, str], *,
             answered: bool) -> OverrideForm:
    """The warnings of a refused order, each with its reason field (the reasons already
    given for this same order kept; a shown warning left without one says so)."""
    shown = exc.extra["conflicts"]
    data = {"signature": signature}
    for c in shown:
        data[OverrideForm.field_name(c["type"])] = reasons.get(c["type"], "")
    overrides = OverrideForm(data, shown=shown)
    overrides.is_valid()
    if answered:
        for c in shown:
            if c.get("reason_refused"):  # given, but too short to count
                overrides.add_error(OverrideForm.field_name(c["type"]), c["reason_refused"])
            elif not reasons.get(c["type"]):
                overrides.add_error(OverrideForm.field_name(c["type"]),
                                    "Give a reason to override this check, or change the order.")
    return overrides


def _medication_hints(store: Any) -> dict[str, dict[str, Any]]:
    """What choosing a medication proposes on the form: its dose unit, routes (codes for the
    select, names for the words) and limits."""
    routes = reference.all_of(store, "Route")
    return {code: {"doseUnit": m.get("doseUnit") or "", "routes": m.get("routes") or [],
                   "routeNames": [(routes.get(r) or {}).get("name") or r
                                  for r in m.get("routes") or []],
                   "maxSingleDose": m.get("maxSingleDose"), "maxDailyDose": m.get("maxDailyDose")}
            for code, m in reference.all_of(store, "Medication").items() if m.get("active", True)}


def order_action(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    """POST-only buttons on the chart: ready/start/complete, assign to me/unassign, and
    cancel, which opens its confirmation (:func:`cancel_order`). A reason typed in the
    chart's cancel box means cancelling, whichever button the form's Enter pressed."""
    if request.method != "POST":
        return redirect("admin:patient_chart", patient_id)
    action = request.POST.get("action", "")
    if action == "cancel" or (request.POST.get("reason", "").strip()
                              and policy.allows(request.user, "cancel_order")):
        return cancel_order(request, patient_id, order_id, diverted=action != "cancel")
    actor = actor_for(request.user)
    etag = request.POST.get("etag") or None
    if action in ("assign", "unassign"):
        policy.require(request.user, "assign_order")
        me = action == "assign"
        _report(request, lambda: use_cases.assign_order(use_cases.AssignOrder(
            patient_id, order_id, actor.id if me else None,
            actor.display_name if me else None, etag), new_uow(), actor=actor),
            "Order updated.")
    else:
        policy.require(request.user, "progress_order")
        _report(request, lambda: use_cases.progress_order(use_cases.ProgressOrder(
            patient_id, order_id, action, "", etag), new_uow(), actor=actor), "Order updated.")
    return redirect("admin:patient_chart", patient_id)


def _order_facts(order: dict[str, Any]) -> dict[str, str]:
    """What a cancel decision rests on, in words: status and assignee."""
    return {"status": STATUS_LABELS.get(order["status"], order["status"]),
            "assignee": order.get("assigneeName") or "nobody"}


def cancel_order(request: HttpRequest, patient_id: str, order_id: str, *,
                 diverted: bool = False) -> HttpResponse:
    """The cancel confirmation: the order as on record and a required reason; only its own
    button (``confirm``) cancels. A stale etag keeps the reason, shows the order as the user
    saw it beside how it is now, and re-binds to the current version for a second submit."""
    policy.require(request.user, "cancel_order")
    context = _chart_context(patient_id)
    order = next((o for o in context["orders"] if o["orderId"] == order_id), None)
    if order is None:
        raise Http404("No such order on this patient.")
    facts = _order_facts(order)
    seen = {"etag": order["etag"], "seen_status": facts["status"],
            "seen_assignee": facts["assignee"], "confirm": "1"}
    conflict = None
    if request.POST.get("confirm"):
        form = CancelOrderForm(request.POST)
        if form.is_valid():
            d = form.cleaned_data
            try:
                use_cases.progress_order(use_cases.ProgressOrder(
                    patient_id, order_id, "cancel", d["reason"], d["etag"]), new_uow(),
                    actor=actor_for(request.user))
            except StaleWrite:
                form.add_error(None, CONFLICT_MESSAGE)
                conflict = [{"label": "Status", "yours": d["seen_status"],
                             "now": facts["status"]},
                            {"label": "Assigned to", "yours": d["seen_assignee"],
                             "now": facts["assignee"]}]
                for row in conflict:
                    row["differs"] = row["yours"] != row["now"]
                form.data = {**form.data.dict(), **seen}
            except DomainError as exc:
                _attach(form, exc)
            else:
                messages.success(request, f"Order cancelled: {order['description']}.")
                return redirect("admin:patient_chart", patient_id)
    else:
        # From the chart: the reason typed there is kept; the version is the one shown now.
        form = CancelOrderForm(initial={**seen, "reason": request.POST.get("reason", "")})
        if request.POST.get("etag") and request.POST["etag"] != order["etag"]:
            messages.warning(request, "This order changed since the chart was shown; it is "
                                      "shown here as it is now.")
    return admin.site.render(request, "patients/order_cancel.html", {
        **context, "form": form, "order": order, "facts": facts, "conflict": conflict,
        "diverted": diverted}, title=f"Cancel the order: {order['description']}?")


@requires("administer")
def administer(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    """The chart's (and the order's) Administer: the MAR's Record form, back to the chart."""
    return record_form(request, patient_id, order_id,
                       back=reverse("admin:patient_chart", args=[patient_id]),
                       back_label="Back to the chart")
