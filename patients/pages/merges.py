"""Merging two records of one person (records staff): choose the survivor, see side by side
what each record holds and what the survivor will hold, the conflicts that block the merge,
then confirm with a reason. Thin: the rules and the saga are the use case's."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from hisadmin.core.inputs import CheckedForm
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.domain.errors import UnknownPatient
from patients.domain.results import resulted
from patients.pages import labels
from patients.pages.duplicates import side
from patients.pages.records import allergy_context
from patients.persistence import handovers, observations, queries

REASON_MAX = 500
COUNTED = 100  # how many handover notes or observation sets a side counts before "100+"


class MergeForm(CheckedForm):
    reason = forms.CharField(
        max_length=REASON_MAX, widget=forms.Textarea(attrs={"rows": 3}),
        label="Why they are one person",
        help_text="For example: same NHS number; registered as Unknown on arrival. Kept with "
                  "your name in both records' audit trail.")
    confirm = forms.BooleanField(
        label="I have compared both records: they are one person, and the second record "
              "will be merged into the first")
    survivor_etag = forms.CharField(widget=forms.HiddenInput)
    retired_etag = forms.CharField(widget=forms.HiddenInput)


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
        **side({**p, "etag": p["etag"]}), "patient": p, "allergy": allergy_context(p),
        "merged_into": p.get("mergedInto") or None,
        "stays": stays, "active_stay": chart["active_admission"], "orders": orders,
        "active_orders": [o for o in orders if o["is_active"]],
        "doses": sum(len(o.get("administrations") or []) for o in orders),
        "results": list(resulted(orders)),
        "handovers": _count(notes[:COUNTED], len(notes) > COUNTED),
        "observations": _count(sets, bool(more_sets)),
    }


def will_hold(survivor: dict[str, Any], retired: dict[str, Any]) -> dict[str, Any]:
    """What the survivor will hold, counted: both records' stays, orders, doses, results."""
    both = (survivor, retired)
    return {"stays": sum(len(s["stays"]) for s in both),
            "orders": sum(len(s["orders"]) for s in both),
            "active_orders": sum(len(s["active_orders"]) for s in both),
            "doses": sum(s["doses"] for s in both),
            "results": sum(len(s["results"]) for s in both)}


def swap_url(survivor_id: str, retired_id: str) -> str:
    return reverse("admin:records_merge") + "?" + urlencode(
        {"survivor": retired_id, "retired": survivor_id})


@requires("merge_records")
def merge_records(request: HttpRequest) -> HttpResponse:
    """``?survivor=&retired=``: the two records side by side, the survivor first; "Swap"
    makes the other one survive."""
    survivor_id = (request.GET.get("survivor") or request.POST.get("survivor") or "").strip()
    retired_id = (request.GET.get("retired") or request.POST.get("retired") or "").strip()
    if not survivor_id or not retired_id or survivor_id == retired_id:
        raise BadRequest("Choose two different records to merge.")
    survivor, retired = holdings(survivor_id), holdings(retired_id)
    form = MergeForm(initial={"survivor_etag": survivor["etag"],
                              "retired_etag": retired["etag"]})
    return admin.site.render(request, "patients/merge.html", {
        "survivor": survivor, "retired": retired, "sides": [survivor, retired], "form": form,
        "will": will_hold(survivor, retired), "conflicts": [], "confirmable": False,
        "swap_url": swap_url(survivor_id, retired_id)},
        title=f"Merge {retired['mrn']} into {survivor['mrn']}: review and confirm")
