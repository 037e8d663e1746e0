"""Who viewed this record: the access audit's page for admins (``read_access_log``).

``/admin/access-log/`` finds a patient by MRN; ``/admin/patients/<id>/access/`` lists the
views of that patient's record and the lists that showed the patient (worklists, name
searches, lists in the API), newest first, from a date on. The records are written off
the request path (``hisadmin.core.access_log``), so the last second's views may not be
listed yet.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django import forms
from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone

from cosmos_backend import errors as store_errors
from hisadmin.core.inputs import CheckedForm
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from operations.models import AccessRecord
from patients.domain.errors import UnknownPatient
from patients.pages.records import banner_context
from patients.persistence import queries

SHOWN = 500  # newest first; an older period is asked for with "since"
DEFAULT_DAYS = 90


class MrnForm(CheckedForm):
    mrn = forms.CharField(label="MRN", max_length=40)


class SinceForm(CheckedForm):
    since = forms.DateField(
        label="Since",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=f"Views from this day on (default: the last {DEFAULT_DAYS} days).",
    )


@requires("read_access_log")
def access_index(request: HttpRequest) -> HttpResponse:
    """An MRN leads to that record's access log."""
    form = MrnForm(request.GET or None)
    if form.is_valid():
        found = queries.by_mrn(get_store(), form.cleaned_data["mrn"].strip())
        if found is not None:
            return redirect("admin:patient_access", found["patientId"])
        form.add_error("mrn", "No patient has this MRN.")
    return admin.site.render(
        request, "patients/access_index.html", {"form": form}, title="Who viewed a record"
    )


def start_of(day: object) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))  # type: ignore[arg-type]


@requires("read_access_log")
def patient_access(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The views of one patient's record, and the list views that showed them: when, who,
    what, through what, from where."""
    try:
        patient = queries.patient(get_store(), patient_id)
    except (UnknownPatient, store_errors.NotFound, store_errors.InvalidRequest, ValueError):
        raise Http404("There is no such patient.") from None
    form = SinceForm(request.GET or None)
    since = timezone.now() - timedelta(days=DEFAULT_DAYS)
    if form.is_valid() and form.cleaned_data["since"]:
        since = start_of(form.cleaned_data["since"])
    rows = list(AccessRecord.of_patient(patient_id, since)[: SHOWN + 1])
    banner = banner_context(queries.chart(get_store(), patient_id))  # every patient page's
    return admin.site.render(
        request,
        "patients/access_log.html",
        {
            "patient": patient,
            "banner": banner,
            "form": form,
            "rows": rows[:SHOWN],
            "more": len(rows) > SHOWN,
            "since": since,
            "shown": SHOWN,
        },
        title=f"Who viewed this record ({patient['mrn']})",
    )
