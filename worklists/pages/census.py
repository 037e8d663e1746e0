"""Admin page: a ward's midnight census over chosen days, as a chart, a table and CSV."""

from __future__ import annotations

import csv
from io import StringIO
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from hisadmin.core.inputs import hospital_time_zone, hospital_today
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.persistence import reference
from worklists.pages.census_chart import occupancy_svg, summary
from worklists.pages.worklists import refuse
from worklists.read.census import MAX_DAYS, BadSpan, Census, read_span, ward_census

CSV_HEADER = ("date", "in_at_start_of_day", "admissions", "transfers_in", "transfers_out",
              "discharges", "in_at_midnight", "beds", "occupancy_percent")


def _wards() -> list[tuple[str, str]]:
    """Every ward, retired ones too (their past days have a census), by department name."""
    store = get_store()
    departments = dict(reference.choices(store, "Department"))
    wards = reference.all_of(store, "Ward")
    return sorted(((code, f"{departments.get(w.get('departmentId'), '')} — {w.get('name')}"
                    + ("" if w.get("active", True) else " (closed)"))
                   for code, w in wards.items()), key=lambda choice: choice[1])


def _blank(count: int | None) -> int | str:
    """A count, or "" for a midnight still to come."""
    return "" if count is None else count


def _csv(census: Census) -> HttpResponse:
    out = StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for d in census.days:
        writer.writerow((d.day.isoformat(), _blank(d.at_start), d.admissions,
                         d.transfers_in, d.transfers_out, d.discharges,
                         _blank(d.at_midnight), d.beds,
                         "" if d.occupancy is None else f"{d.occupancy:g}"))
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    name = f"census-{census.ward_id}-{census.first}-{census.last}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@requires("read_census")
def census_page(request: HttpRequest) -> HttpResponse:
    """``?ward=&from=&to=`` (``format=csv``: the same days as CSV). A ward that does not
    exist is the 400 page naming the wards (the lists' one rule); dates that are not
    dates, or a span the census refuses, a 400 page that says why."""
    g = request.GET
    wards = _wards()
    ward = g.get("ward") or (wards[0][0] if wards else "")
    context: dict[str, Any] = {"wards": wards, "ward": ward, "first": g.get("from", ""),
                               "last": g.get("to", ""), "max_days": MAX_DAYS}
    if not ward:
        return admin.site.render(request, "worklists/census.html",
                                 {**context, "error": "No wards are set up yet."},
                                 title="Midnight census")
    entry = reference.all_of(get_store(), "Ward").get(ward)
    if entry is None:
        refuse("ward", "Ward", ward, wards)
    try:
        first, last = read_span(g.get("from", ""), g.get("to", ""), hospital_today())
    except BadSpan as exc:
        return admin.site.render(request, "worklists/census.html",
                                 {**context, "error": str(exc)}, title="Midnight census",
                                 status=400)
    census = ward_census(get_store(), ward, first, last, zone=hospital_time_zone(),
                         beds=len(entry.get("beds") or ()))
    if g.get("format") == "csv":
        return _csv(census)
    name = entry.get("name") or ward
    title = f"Occupancy of {name} at midnight, {len(census.days)} days"
    csv_query = request.GET.copy()
    csv_query.update({"ward": ward, "from": first.isoformat(), "to": last.isoformat()})
    csv_query["format"] = "csv"
    return admin.site.render(request, "worklists/census.html", {
        **context, "first": first.isoformat(), "last": last.isoformat(), "ward_name": name,
        "beds": len(entry.get("beds") or ()), "days": census.days,
        "chart": occupancy_svg(census.days, title), "chart_title": title,
        "summary": summary(census.days), "csv_url": f"{request.path}?{csv_query.urlencode()}",
        "time_zone": str(hospital_time_zone())}, title="Midnight census")
