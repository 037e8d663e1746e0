"""Worklist pages: admin chrome, filters, sort links, paging, self-refreshing with htmx."""

from __future__ import annotations

import time

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from hisadmin.roles import Role, role_required
from hisadmin.store import get_store
from patients import reference

from . import queries
from .lag import relay_lag

WORKLIST_ROLES = (Role.CLERK, Role.CLINICIAN, Role.NURSE)
COLUMNS = [("mrn", "MRN"), ("name", "Name"), (None, "Age"), (None, "Sex"), ("ward", "Ward"),
           ("bed", "Bed"), ("admitted", "Admitted on"), (None, "Attending"), (None, "Stay (days)")]


@role_required(*WORKLIST_ROLES)
def admitted_patients(request: HttpRequest) -> HttpResponse:
    store = get_store()
    departments = reference.choices(store, "Department")
    department = request.GET.get("department") or (departments[0][0] if departments else "")
    wards = [(code, w["name"]) for code, w in reference.all_of(store, "Ward").items()
             if w.get("departmentId") == department]
    f = queries.AdmittedFilter(
        department_id=department, ward_id=request.GET.get("ward", ""),
        name=request.GET.get("q", ""), sort=request.GET.get("sort", "bed"),
        descending=request.GET.get("dir") == "desc")
    started = time.perf_counter()
    rows, token = queries.admitted(store, f, continuation=request.GET.get("page") or None)
    context = {
        "rows": rows, "next_token": token, "filter": f, "departments": departments,
        "wards": wards, "columns": COLUMNS, "query_ms": (time.perf_counter() - started) * 1000,
        "loaded_at": time.time(), "lag": _lag(),
    }
    template = ("worklists/_admitted_table.html" if request.htmx
                else "worklists/admitted.html")
    if request.htmx:
        return TemplateResponse(request, template, context)
    return admin.site.render(request, template, context, title="Admitted patients")


def _lag() -> dict:
    try:
        return relay_lag()
    except Exception:  # noqa: BLE001 - the page still shows rows when lag is unknown
        return {"pending": None, "seconds": None}
