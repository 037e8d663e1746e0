"""Records staff's pages for possible duplicates: the list of likely pairs with why, and
"Not the same person" (confirmed, with a reason). Thin: policy, form, use case, message."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from hisadmin.core import tokens
from hisadmin.core.inputs import CheckedForm
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients.domain.duplicates import PairNotListed
from patients.domain.errors import DomainError
from patients.domain.merges import REASON_MAX
from patients.domain.records import (
    SEX_LABELS,
    AllergyStatus,
    allergies_in_words,
    allergy_names,
)
from patients.persistence import duplicates
from patients.use_cases.duplicates import MarkNotSamePerson, mark_not_same_person

SCOPE = "duplicates"  # the page tokens' scope, as the API's
PAGE_SIZE = 20


class NotSamePersonForm(CheckedForm):
    reason = forms.CharField(
        max_length=REASON_MAX, widget=forms.Textarea(attrs={"rows": 3}),
        label="Why they are two people",
        help_text="For example: different NHS numbers on their letters, twins, mother and "
                  "daughter. Kept with your name.")


def side(p: dict[str, Any]) -> dict[str, Any]:
    """One patient of a pair, as the pages show them: names, MRN, birth date, sex and
    allergy status in words."""
    status = AllergyStatus(p.get("allergyStatus") or AllergyStatus.UNKNOWN)
    return {"id": p["patientId"], "mrn": p["mrn"],
            "name": f"{p['familyName'].upper()}, {p['givenName']}",
            "born": p["birthDate"], "sex": SEX_LABELS.get(p.get("sex", ""), "Unknown"),
            "allergy": allergies_in_words(status, allergy_names(p.get("allergies") or [])),
            "allergy_status": str(status),
            "etag": p.get("etag", "")}


def pair_context(p: duplicates.Listed) -> dict[str, Any]:
    merge = reverse("admin:records_merge") + "?" + urlencode(
        {"survivor": p.first["patientId"], "retired": p.second["patientId"]})
    first, second = side(p.first), side(p.second)
    return {"pair_id": p.pair_id, "first": first, "second": second, "sides": [first, second],
            "reasons": p.reasons, "merge_url": merge,
            "not_same_url": reverse("admin:duplicate_not_same", args=[p.pair_id])}


@requires("find_duplicates")
def duplicate_list(request: HttpRequest) -> HttpResponse:
    """Likely pairs, a page at a time, each with why and what records staff may do."""
    raw = tokens.open_page(request.GET.get("page") or None, scope=SCOPE)
    pairs, token = duplicates.page(get_store(), page_size=PAGE_SIZE, continuation=raw)
    following = tokens.sign_page(token, scope=SCOPE)
    return admin.site.render(request, "patients/duplicates.html", {
        "pairs": [pair_context(p) for p in pairs],
        "next_url": "?" + urlencode({"page": following}) if following else None,
        "paged": bool(raw)}, title="Possible duplicates")


@requires("find_duplicates")
def not_same_person(request: HttpRequest, pair_id: str) -> HttpResponse:
    """The confirmation: both records, why they were listed, a required reason; only the
    page's own button decides."""
    try:
        pair = duplicates.find(get_store(), pair_id)
    except PairNotListed as exc:
        messages.error(request, str(exc))
        return redirect("admin:duplicate_list")
    form = NotSamePersonForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            mark_not_same_person(MarkNotSamePerson(pair.pair_id, form.cleaned_data["reason"]),
                                 new_uow(), actor=actor_for(request.user))
        except PairNotListed as exc:
            messages.error(request, str(exc))
            return redirect("admin:duplicate_list")
        except DomainError as exc:
            form.add_error("reason" if exc.field == "reason" else None, str(exc))
        else:
            a, b = side(pair.first), side(pair.second)
            messages.success(request, f"Recorded: {a['name']} ({a['mrn']}) and {b['name']} "
                                      f"({b['mrn']}) are not the same person. They are not "
                                      "listed again.")
            return redirect("admin:duplicate_list")
    return admin.site.render(request, "patients/duplicate_not_same.html", {
        **pair_context(pair), "form": form}, title="Not the same person: confirm")
