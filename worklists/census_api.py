"""The midnight census in the API: ``GET /api/v1/wards/census?ward=&from=&to=``.

Mounted under ``/wards`` beside the bed boards (``patients.api.wards``), which cannot hold
it: the patients app never imports the worklists that project its events.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema

from hisadmin.core import policy
from hisadmin.core.inputs import Text, hospital_time_zone, hospital_today
from hisadmin.core.parameters import one_of
from hisadmin.core.problems import json_response, problem, problem_type
from hisadmin.core.store import get_store
from patients.api.schemas import Problem
from patients.persistence import reference
from worklists.read.census import MAX_DAYS, BadSpan, read_span, ward_census

router = Router(tags=["wards and beds"])
BAD_SPAN = problem_type("bad-census-span")


class CensusDayOut(Schema):
    date: str = Field(description="the day, YYYY-MM-DD in the hospital's time zone")
    at_start: int | None = Field(description="in-patients at the midnight that began the "
                                 "day; null while that midnight is still to come")
    admissions: int
    transfers_in: int = Field(description="arrived from another ward")
    transfers_out: int = Field(description="left for another ward")
    discharges: int
    at_midnight: int | None = Field(description="in-patients at the midnight that ended the "
                                    "day: the day's census; null while that midnight is "
                                    "still to come (today, until it has passed)")
    beds: int = Field(description="the ward's beds in reference data that day (at the "
                      "midnight that ended it; now, for today)")
    occupancy: float | None = Field(description="at_midnight as a per cent of beds, one "
                                    "decimal; null for a ward without beds, or with no "
                                    "at_midnight yet")


class CensusOut(Schema):
    ward: str
    ward_name: str
    time_zone: str = Field(description="HOSPITAL_TIME_ZONE: where days begin and end")
    first: str = Field(alias="from")
    last: str = Field(alias="to")
    days: list[CensusDayOut]
    generation: int


class WardsCensusOut(Schema):
    time_zone: str = Field(description="HOSPITAL_TIME_ZONE: where days begin and end")
    first: str = Field(alias="from")
    last: str = Field(alias="to")
    wards: list[CensusOut] = Field(description="every ward, closed ones too (their past "
                                   "days have a census), by department and name")


def census_body(ward_code: str, first: str, last: str) -> dict[str, Any]:
    """The census document (pages and API alike); every ward's when ``ward_code`` is "".
    BadParameter (an unknown ward); BadSpan."""
    store = get_store()
    wards = reference.all_of(store, "Ward")
    one_of("ward", ward_code, sorted(wards))
    start, end = read_span(first, last, hospital_today())
    zone = hospital_time_zone()
    versions = reference.saved_versions(store, "Ward")

    def one(code: str) -> dict[str, Any]:
        ward = wards[code]
        census = ward_census(store, code, start, end, zone=zone,
                             beds=len(ward.get("beds") or ()), versions=versions)
        return {"ward": code, "ward_name": ward.get("name") or code,
                "time_zone": str(zone), "from": start.isoformat(), "to": end.isoformat(),
                "days": [d.as_json() for d in census.days], "generation": census.generation}

    if ward_code:
        return one(ward_code)
    departments = dict(reference.choices(store, "Department"))
    order = sorted(wards, key=lambda c: (departments.get(wards[c].get("departmentId"), ""),
                                         wards[c].get("name") or c, c))
    return {"time_zone": str(zone), "from": start.isoformat(), "to": end.isoformat(),
            "wards": [one(code) for code in order]}


FROM = Query("", alias="from", description="the first day, YYYY-MM-DD (hospital time); "
             "empty: 27 days before `to`")
TO = Query("", alias="to", description="the last day, YYYY-MM-DD; empty: today, or 27 days "
           "after `from`")


WARD = Query("", description="the ward's code; empty: every ward (`wards`)")


@router.get("/census", response={200: CensusOut | WardsCensusOut, 400: Problem},
            summary="A ward's (or every ward's) midnight census, day by day", by_alias=True)
def census(request: HttpRequest, ward: Text(40) = WARD, first: Text(10) = FROM,
           last: Text(10) = TO) -> HttpResponse:
    """Per day: in-patients at the midnight that began it and at the one that ended it
    (midnight in HOSPITAL_TIME_ZONE, so a day of the clock change has 23 or 25 hours;
    null until that midnight has passed, so today has no ``at_midnight`` yet),
    admissions, transfers in and out, discharges, and the occupancy of the ward's beds
    that day. Without ``ward``, every ward's census in ``wards``.
    Projected from the admission events (``manage.py rebuild_worklists`` rebuilds it).
    At most 366 days: a longer span, one reversed, or a date not written YYYY-MM-DD is a
    400 problem (type /api/v1/problems/bad-census-span); an unknown ward a 400 problem
    (type /api/v1/problems/bad-parameter) listing the wards' codes."""
    policy.require(request.user, "read_census")
    try:
        body = census_body(ward, first, last)
    except BadSpan as exc:
        return problem(request, 400, "Bad span of days", str(exc), type=BAD_SPAN,
                       max_days=MAX_DAYS)
    return json_response(request, body)
