"""Merging two records of one person (records staff): choose the survivor, see side by side
what each record holds and what the survivor will hold, the conflicts that block the merge,
then confirm with a reason; undo it within a day. Thin: the rules and the saga are
:mod:`patients.domain.merges` and :mod:`patients.use_cases.merges`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from cosmos_backend.uow import StaleWrite
from hisadmin.core.inputs import CheckedForm
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients.domain.errors import DomainError, UnknownPatient
from patients.domain.merges import REASON_MAX, LockState, merged_view
from patients.domain.records import ALLERGY_STATUS_LABELS
from patients.domain.results import resulted
from patients.pages import labels
from patients.pages.duplicates import side
from patients.pages.records import allergy_context
from patients.persistence import handovers, observations, queries
from patients.persistence.snapshots import read_snapshot
from patients.use_cases.merges import (
    MergePatients,
    UnmergePatients,
    merge_patients,
    unmerge_patients,
)

COUNTED = 100  # how many handover notes or observation sets a side counts before "100+"
STALE = ("One of the two records was changed by someone else meanwhile. The page now shows "
         "both as they are now: check them and confirm again (your reason is kept).")
REASON_HELP = "Kept with your name in both records' audit trail."


class MergeForm(CheckedForm):
    reason = forms.CharField(
        max_length=REASON_MAX, widget=forms.Textarea(attrs={"rows": 3}),
        label="Why they are one person",
        help_text="For example: same NHS number; registered as Unknown on arrival. "
                  + REASON_HELP)
    confirm = forms.BooleanField(
        label="I have compared both records: they are one person")
    survivor_etag = forms.CharField(widget=forms.HiddenInput)
    retired_etag = forms.CharField(widget=forms.HiddenInput)


class UndoForm(CheckedForm):
    reason = forms.CharField(max_length=REASON_MAX, widget=forms.Textarea(attrs={"rows": 3}),
                             label="Why the merge is undone", help_text=REASON_HELP)


def _count(items: list[Any], more: bool) -> str:
    return f"{len(items)}+" if more else str(len(items))


def holdings(patient_id: str) -> dict[str, Any]:
    """What one record holds, in words, for the side-by-side: demographics, allergies,
    stays, orders, doses recorded, results, handover notes and observation sets."""
    store = get_store()
    try:
        chart = queries.chart(store, patient_id)
    except UnknownPatient as exc:
        raise Http404(str(exc)) from exc
    p = chart["patient"]
    n = labels.names(store)
    stays = [labels.label_admission(dict(a), n) for a in chart["admissions"]]
    orders = [labels.label_order(dict(o), n) for o in queries.orders(store, patient_id)]
    notes = handovers.latest(store, patient_id, limit=COUNTED + 1)
    sets, more_sets = observations.page(store, patient_id, limit=COUNTED)
    return {
        **side(p), "patient": p, "allergy": allergy_context(p),
        "merged_into": p.get("mergedInto") or None,
        "stays": stays, "active_stay": chart["active_admission"], "orders": orders,
        "active_orders": [o for o in orders if o["is_active"]],
        "doses": sum(len(o.get("administrations") or []) for o in orders),
        "results": list(resulted(orders)),
        "handovers": _count(notes[:COUNTED], len(notes) > COUNTED),
        "observations": _count(sets, bool(more_sets)),
    }


def will_hold(survivor: dict[str, Any], retired: dict[str, Any]) -> dict[str, Any]:
    """What the survivor will hold (the rules' preview for allergies, counts for the rest)
    and why the merge would be refused (``refusal``: None when it would not)."""
    store = get_store()
    view = merged_view(read_snapshot(store, survivor["id"]), read_snapshot(store, retired["id"]))
    allergies = []
    for a in view["allergies"]:
        if a.get("status", "active") != "active":
            continue
        labels.label_allergy(a)
        a["from_mrn"] = (a.get("mergedFrom") or {}).get("mrn", "")
        allergies.append(a)
    both = (survivor, retired)
    return {"allergies": allergies, "allergy_label": ALLERGY_STATUS_LABELS[
                view["allergy_status"]],
            "stays": sum(len(s["stays"]) for s in both),
            "orders": sum(len(s["orders"]) for s in both),
            "active_orders": sum(len(s["active_orders"]) for s in both),
            "doses": sum(s["doses"] for s in both),
            "results": sum(len(s["results"]) for s in both),
            "refusal": view["refusal"]}


def conflicts(refusal: dict[str, str] | None, sides: list[dict[str, Any]]
              ) -> list[dict[str, Any]]:
    """The conflict blocking the merge, in words, with where to resolve it: a stay to
    discharge on either chart, or the allergies a clinician must reconcile."""
    if refusal is None:
        return []
    kind = refusal["conflict"]
    anchor = {"allergy-status-conflict": "#allergies"}.get(kind, "")
    what = {"allergy-status-conflict": "Allergies on {mrn} (for a clinician)",
            "both-admitted": "Open {mrn} to discharge"}.get(kind, "Open {mrn}")
    links = [{"url": reverse("admin:patient_chart", args=[s["id"]]) + anchor,
              "label": what.format(mrn=s["mrn"])} for s in sides]
    return [{"type": kind, "detail": refusal["detail"], "links": links}]


def swap_url(survivor_id: str, retired_id: str) -> str:
    return reverse("admin:records_merge") + "?" + urlencode(
        {"survivor": retired_id, "retired": survivor_id})


def _merged(request: HttpRequest, survivor: dict[str, Any], retired: dict[str, Any],
            merge_id: str) -> HttpResponse:
    undo = reverse("admin:records_unmerge", args=[retired["id"]])
    messages.success(request, format_html(
        "Merged {} ({}) into {} ({}). Records staff can <a href=\"{}\" id=\"undo-merge-link\">"
        "undo the merge</a> within a day.", retired["name"], retired["mrn"], survivor["name"],
        survivor["mrn"], undo))
    return redirect("admin:patient_chart", survivor["id"])


@requires("merge_records")
def merge_records(request: HttpRequest) -> HttpResponse:
    """``?survivor=&retired=``: the two records side by side, the survivor first; "Swap"
    makes the other one survive. The form's own button merges, with both versions shown: a
    record changed meanwhile is a conflict that shows both again and keeps the reason."""
    survivor_id = (request.GET.get("survivor") or request.POST.get("survivor") or "").strip()
    retired_id = (request.GET.get("retired") or request.POST.get("retired") or "").strip()
    if not survivor_id or not retired_id or survivor_id == retired_id:
        raise BadRequest("Choose two different records to merge.")
    form = MergeForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        d = form.cleaned_data
        try:
            merge_id = merge_patients(MergePatients(
                survivor_id, retired_id, d["reason"], survivor_version=d["survivor_etag"],
                retired_version=d["retired_etag"]), new_uow(), actor=actor_for(request.user))
        except StaleWrite:
            form.add_error(None, STALE)
        except DomainError as exc:
            form.add_error("reason" if exc.field == "reason" else None, str(exc))
        else:
            return _merged(request, holdings(survivor_id), holdings(retired_id), merge_id)
    survivor, retired = holdings(survivor_id), holdings(retired_id)
    versions = {"survivor_etag": survivor["etag"], "retired_etag": retired["etag"]}
    if form.is_bound:  # re-bound to the versions shown now; what was typed stays
        form.data = {**form.data.dict(), **versions}
    else:
        form = MergeForm(initial=versions)
    will = will_hold(survivor, retired)
    return admin.site.render(request, "patients/merge.html", {
        "survivor": survivor, "retired": retired, "sides": [survivor, retired], "form": form,
        "will": will, "conflicts": conflicts(will["refusal"], [survivor, retired]),
        "confirmable": will["refusal"] is None, "swap_url": swap_url(survivor_id, retired_id),
        "merge_label": f"Merge {retired['mrn']} into {survivor['mrn']}"},
        title=f"Merge {retired['mrn']} into {survivor['mrn']}: review and confirm")


@requires("merge_records")
def unmerge_records(request: HttpRequest, patient_id: str) -> HttpResponse:
    """Undo the merge of the record ``patient_id`` (the retired one) into its survivor:
    what it will do, a reason, one button. The use case refuses after a day."""
    retired = holdings(patient_id)
    lock = retired["merged_into"] or {}
    if lock.get("state") != LockState.MERGED:
        messages.error(request, "This record is not merged into another: there is nothing to "
                                "undo.")
        return redirect("admin:patient_chart", patient_id)
    survivor = holdings(str(lock["survivorId"]))
    form = UndoForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            unmerge_patients(UnmergePatients(survivor["id"], str(lock["mergeId"]),
                                             form.cleaned_data["reason"]),
                             new_uow(), actor=actor_for(request.user))
        except DomainError as exc:
            form.add_error("reason" if exc.field == "reason" else None, str(exc))
        else:
            messages.success(request, f"Merge undone: {retired['mrn']} is a record of its own "
                                      f"again, and {survivor['mrn']} no longer holds its "
                                      "history.")
            return redirect("admin:patient_chart", patient_id)
    return admin.site.render(request, "patients/unmerge.html", {
        "survivor": survivor, "retired": retired, "form": form},
        title=f"Undo the merge of {retired['mrn']} into {survivor['mrn']}")
