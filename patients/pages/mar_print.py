"""The day's medication record to print for downtime: the same grid as the MAR page, by
shift with the shift on now first, on a page of its own with no navigation, the patient
banner repeated at the top of every printed sheet (a table header, which browsers repeat;
CSS running headers are not supported in Chromium)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from hisadmin.core.inputs import hospital_time_zone, hospital_today
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients import use_cases
from patients.pages import mar_shifts
from patients.pages.mar import _day, _grid
from patients.pages.records import _chart_context


@requires("read")
def medication_record_print(request: HttpRequest, patient_id: str) -> HttpResponse:
    """``?date=YYYY-MM-DD`` (default today in the hospital's time), as the MAR page takes it;
    a malformed day is the 400 page, an unknown patient the 404 page."""
    context = _chart_context(patient_id)
    day = _day(request.GET.get("date")) or hospital_today()
    record = use_cases.medication_record(get_store(), patient_id, day,
                                         tz=hospital_time_zone())
    columns, rows, prn, untimed = _grid(record)
    return TemplateResponse(request, "patients/mar_print.html", {
        **context, "day": day, "today": hospital_today(), "rows": rows, "prn": prn,
        "untimed": untimed,
        "printed_at": mar_shifts.local_now(), "time_zone": str(hospital_time_zone()),
        **mar_shifts.context(
            columns, rows, day, context.get("active_admission"))})
