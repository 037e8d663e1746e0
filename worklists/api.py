"""Worklist API (``/api/v1/worklists``): one endpoint per worklist, the pages' filters.

Rows are returned with snake_case keys; ``continuation`` is passed back as ``page`` for the
next page; ``lag`` tells how far the views are behind the store.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from ninja import Header, Query, Router, Schema
from ninja.errors import HttpError
from pydantic import Field

from hisadmin.core import access_log, consistency, policy
from hisadmin.core.inputs import PageToken, Text
from hisadmin.core.parameters import BadParameter, one_of
from hisadmin.core.problems import problem
from hisadmin.core.renderers import ORJSONRenderer
from hisadmin.core.store import get_store
from patients.api.schemas import Problem, snake_keys
from patients.domain import orders as order_rules
from patients.persistence import reference
from worklists.projection.schema import (
    ADMITTED_SORTS,
    AT_RISK_SORTS,
    ORDER_SORTS,
    REVIEW_SORTS,
    SEARCH_SORTS,
)
from worklists.read import queries
from worklists.read.consistency import wait_applied
from worklists.read.lag import relay_lag
from worklists.read.my_patients import my_patients as read_my_patients

router = Router(tags=["worklists"])

Dir = Literal["asc", "desc"]
AdmittedSort = Literal[tuple(ADMITTED_SORTS)]  # type: ignore[valid-type]
OrderSort = Literal[tuple(ORDER_SORTS)]  # type: ignore[valid-type]
SearchSort = Literal[tuple(SEARCH_SORTS)]  # type: ignore[valid-type]
ReviewSort = Literal[tuple(REVIEW_SORTS)]  # type: ignore[valid-type]
ResultKind = Literal["", "lab", "imaging"]
AtRiskSort = Literal[tuple(AT_RISK_SORTS)]  # type: ignore[valid-type]
# The order filters take the domain's codes ("" is no filter): another value is a 400
# bad-parameter naming them, never an empty list (hisadmin.core.parameters).
OrderKind = Literal[("", *order_rules.KINDS)]  # type: ignore[valid-type]
ActiveStatus = Literal[("", *(str(s) for s in order_rules.ACTIVE))]  # type: ignore[valid-type]
OrderUrgency = Literal[("", *(str(u) for u in order_rules.URGENCIES))]  # type: ignore[valid-type]


def _known(parameter: str, value: str, kind: str, *, required: bool = False) -> str:
    """``value`` (a department or ward code) when it names one, or is empty and not
    ``required``; else a 400 bad-parameter listing the codes."""
    codes = sorted(reference.all_of(get_store(), kind))
    if required and not value:
        raise BadParameter(parameter, value, codes)
    return one_of(parameter, value, codes)


class WorklistPage(Schema):
    items: list[dict[str, Any]]
    continuation: str | None
    generation: int | None = None
    lag: dict[str, Any] | None = None
    total: int | None = Field(None, description="rows matching, all pages (with total=true)")
    truncated: bool = Field(False, description="a name read two ways: more rows match than "
                            "returned; add letters of the given name")


def _snake(row: dict[str, Any]) -> dict[str, Any]:
    """A view row as the API shows it: snake_case keys at every depth (a search row's
    admission too)."""
    return snake_keys(row)


_RENDERER = ORJSONRenderer()


def _answer(request: HttpRequest, items: list[dict[str, Any]], **fields: Any) -> HttpResponse:
    """A :class:`WorklistPage` answer, rendered here: the rows are plain JSON already (as
    stored, keys made snake_case), so ninja validating the page against its schema and
    dumping it again would only cost time (~10 % of a read). Fields not given take the
    schema's defaults; the schema still documents the answer in the OpenAPI. The patients
    shown are noted for the access audit (one list-view record, on success)."""
    access_log.note_list(request, (row.get("patient_id") for row in items))
    page = {"items": items}
    for name, field in WorklistPage.model_fields.items():
        if name == "items":
            continue
        if name not in fields and field.is_required():
            raise TypeError(f"WorklistPage needs {name}")
        page[name] = fields.pop(name) if name in fields else field.get_default()
    if fields:
        raise TypeError(f"not in WorklistPage: {sorted(fields)}")
    return HttpResponse(_RENDERER.render(request, page, response_status=200),
                        content_type=_RENDERER.media_type)


def _lag() -> dict[str, Any] | None:
    try:
        lag = relay_lag()
    except Exception:  # noqa: BLE001 - rows are still worth returning without it
        return None
    return {"pending": lag["pending"], "seconds": lag["seconds"],
            "dead_letters": lag.get("deadLetters")}


def _out(request: HttpRequest, result: queries.Result) -> HttpResponse:
    return _answer(request, [_snake(r) for r in result.rows], continuation=result.continuation,
                   generation=result.generation, lag=_lag(), total=result.total,
                   truncated=result.truncated)


def _page(request: HttpRequest, worklist: queries.Worklist, page: str | None, page_size: int,
          total: bool = False) -> HttpResponse:
    return _out(request, queries.run(get_store(), worklist, page_size=page_size,
                                     continuation=page, total=total))


def _per_department(request: HttpRequest, department: str, build: Any, page: str | None,
                    page_size: int, total: bool) -> HttpResponse:
    """One department's bucket, or (``department`` empty) every department's, merged."""
    if department:
        return _page(request, build(department), page, page_size, total)
    codes = sorted(reference.all_of(get_store(), "Department"))
    return _out(request, queries.run_across(get_store(), [build(code) for code in codes],
                                            page_size=page_size, continuation=page,
                                            total=total))


TOTAL = Query(False, description="also count every matching row (one more query)")
CONSISTENCY = Header(None, alias=consistency.HEADER, description="a command's "
                     "X-Consistency-Token: the answer waits (at most 5 s) until the worklist "
                     "shows that command; 400 (type /api/v1/problems/bad-consistency-token) "
                     "for a token not issued here or naming a change not recorded, 503 with "
                     "Retry-After when not applied in time")
PAGE = Query(None, description="the `continuation` of the previous page, as given: signed "
             "and bound to this query (the same filters and order); any other value is a 400 "
             "(type /api/v1/problems/bad-page-token)")
RETRY_AFTER_SECONDS = 1
# Every worklist read: 400 (a bad paging token, filter or consistency token), 503 (not
# applied in time, Retry-After); the shell adds 401, 403, 422 (hisadmin.openapi).
ANSWERS: dict[int, Any] = {200: WorklistPage, 400: Problem, 503: Problem}


def _read_your_writes(request: HttpRequest, token: str | None) -> HttpResponse | None:
    """With ``X-Consistency-Token`` (from a command's answer): wait, at most 5 s, until the
    worklists show that command; a 503 problem with ``Retry-After`` if they do not yet, a
    400 problem, at once, for a token this system did not issue or one naming a change it
    has not recorded. None: go ahead and read."""
    if not token:
        return None
    try:
        positions = consistency.decode(token)
        if wait_applied(get_store(), positions, timeout=consistency.WAIT_SECONDS):
            return None
    except consistency.BadToken as exc:
        return problem(request, 400, exc.TITLE, str(exc), type=exc.TYPE)
    late = problem(request, 503, "Not applied yet",
                   "The worklists have not applied that change yet; retry shortly.")
    late["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return late


View = Callable[..., Any]


def worklist_read(action: str) -> Callable[[View], View]:
    """The one gate of every worklist endpoint: the role's ``action`` (the policy), then the
    read-your-writes wait on the ``X-Consistency-Token`` header (:func:`_read_your_writes`),
    in that order; the view runs only when both let it. The header is added to the view's
    signature here, so every worklist documents and honours it the same way."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def read(request: HttpRequest, *args: Any, consistency_token: str | None = None,
                 **kwargs: Any) -> Any:
            policy.require(request.user, action)
            if (late := _read_your_writes(request, consistency_token)) is not None:
                return late
            return view(request, *args, **kwargs)

        signature = inspect.signature(view)
        header = inspect.Parameter("consistency_token", inspect.Parameter.KEYWORD_ONLY,
                                   default=CONSISTENCY, annotation="str | None")
        read.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*signature.parameters.values(), header])
        return read

    return decorate


@router.get("/admitted", response=ANSWERS, summary="Admitted patients (census)")
@worklist_read("read_worklists")
def admitted(request: HttpRequest, department: Text(40) = "", ward: Text(40) = "", q: Text(100) = "",
             sort: AdmittedSort = "bed", dir: Dir = "asc", page: PageToken | None = PAGE,
             page_size: int = Query(50, ge=1, le=200), total: bool = TOTAL) -> Any:
    """``q``: name prefix (case- and accent-insensitive) or exact MRN. Without
    ``department``, every department's census merged in the same order."""
    _known("department", department, "Department")
    _known("ward", ward, "Ward")
    return _per_department(request, department, lambda d: queries.admitted(
        d, ward=ward, q=q, sort=sort, descending=dir == "desc"), page, page_size, total)


@router.get("/orders", response=ANSWERS, summary="Active orders of a department")
@worklist_read("read_order_worklists")
def orders(request: HttpRequest, department: Text(40) = "", kind: OrderKind = "",
           status: ActiveStatus = "", urgency: OrderUrgency = "", assignee: Text(150) = "",
           sort: OrderSort = "placed", dir: Dir = "asc",
           page: PageToken | None = PAGE, page_size: int = Query(50, ge=1, le=200),
           total: bool = TOTAL) -> Any:
    """Without ``department``, every department's active orders merged in the same order."""
    _known("department", department, "Department")
    return _per_department(request, department, lambda d: queries.orders(
        d, kind=kind, status=status, urgency=urgency, assignee=assignee, sort=sort,
        descending=dir == "desc"), page, page_size, total)


@router.get("/my-orders", response=ANSWERS, summary="Active orders assigned to me")
@worklist_read("read_order_worklists")
def my_orders(request: HttpRequest, kind: OrderKind = "", status: ActiveStatus = "",
              urgency: OrderUrgency = "", department: Text(40) = "", sort: OrderSort = "placed",
              dir: Dir = "asc", page: PageToken | None = PAGE,
              page_size: int = Query(50, ge=1, le=200), total: bool = TOTAL) -> Any:
    _known("department", department, "Department")
    return _page(request, queries.my_orders(str(request.user.pk), kind=kind, status=status,
                                   urgency=urgency, department=department, sort=sort,
                                   descending=dir == "desc"), page, page_size, total)


@router.get("/patients", response=ANSWERS, summary="Find patients by name prefix or MRN")
@worklist_read("read_worklists")
def patients(request: HttpRequest, q: Text(100) = "", mrn: Text(40) = "", sort: SearchSort = "name",
             dir: Dir = "asc", page: PageToken | None = PAGE,
             page_size: int = Query(50, ge=1, le=200)) -> Any:
    """``mrn``: exact (a point read). ``q``: a name, case- and accent-insensitive, each part
    possibly partial: "SMITH, John" (family, given), "Smith" or "Smi" (family), "John Smith"
    (read both ways round and merged: then no next page, and ``truncated`` when more
    match). At least two letters of the family name."""
    if mrn.strip():
        rows = queries.by_mrn(get_store(), mrn)
        return _answer(request, [_snake(r) for r in rows], continuation=None, total=len(rows))
    try:
        searches = queries.name_searches(q, sort=sort, descending=dir == "desc")
    except queries.SearchTooShort as exc:
        raise HttpError(400, str(exc)) from None
    return _out(request, queries.run_searches(get_store(), searches, page_size=page_size,
                                              continuation=page))


@router.get("/medications-due", response=ANSWERS,
            summary="Doses due, late or coming up within the hour on a ward")
@worklist_read("read_medications_due")
def medications_due(request: HttpRequest, ward: Text(40)) -> Any:
    """One item per open dose time of the ward's scheduled medication orders: late ones of
    earlier today, due ones, and upcoming ones within the next hour, soonest first.
    ``slot_id`` (or ``scheduled_for``) names the dose time to answer with
    ``POST …/administrations``;
    ``dose_status`` is due | late | upcoming (the MAR's rules). The whole list, no paging."""
    _known("ward", ward, "Ward", required=True)
    result = queries.medications_due(get_store(), ward, tz=timezone.get_current_timezone())
    return _answer(request, [_snake(r) for r in result.rows], continuation=None,
                   generation=result.generation, lag=_lag())


@router.get("/my-patients", response=ANSWERS,
            summary="My patients this shift (the calling nurse's beds)")
@worklist_read("read_my_patients")
def my_patients_list(request: HttpRequest) -> Any:
    """One item per occupied bed assigned to the calling nurse in each ward's shift on now:
    ``bed``, ``name``, ``allergy`` (has_allergies | no_known_allergies | unknown) and
    ``allergy_names`` (the active ones, severe first), ``next_dose_at`` and ``late`` (doses
    late), ``unread_results``, ``handover`` (an open handover to acknowledge, or null),
    ``handover_taken`` (with none open: who took over the last shift's or this shift's, ""
    when not named, null when neither was) and ``news2`` (the stay's latest score: ``score``,
    ``risk``, ``next_due_at``, ``not_escalated``; null before one). The whole list, no
    paging."""
    result = read_my_patients(get_store(), str(request.user.pk),
                              tz=timezone.get_current_timezone())
    return _answer(request, [_snake(r) for r in result.rows], continuation=None,
                   generation=result.generation, lag=_lag())


@router.get("/results-to-review", response=ANSWERS,
            summary="Results of my orders not yet acknowledged")
@worklist_read("read_results_to_review")
def results_to_review(request: HttpRequest, kind: ResultKind = "", abnormal: bool = False,
                      sort: ReviewSort = "resulted", dir: Dir = "asc", page: PageToken | None = PAGE,
                      page_size: int = Query(50, ge=1, le=200)) -> Any:
    """For the calling clinician: lab and imaging results of the orders they placed, newest
    first by default; acknowledge one with ``POST /api/v1/patients/{id}/orders/{order_id}/
    acknowledge`` and it leaves the list."""
    return _page(request, queries.results_to_review(
        str(request.user.pk), kind=kind, abnormal=abnormal, sort=sort,
        descending=dir == "desc"), page, page_size)


@router.get("/observations-due", response=ANSWERS,
            summary="Observation sets due on a ward, overdue first")
@worklist_read("read_observation_worklists")
def observations_due(request: HttpRequest, ward: Text(40)) -> Any:
    """One item per admitted patient of the ward: ``next_due_at`` (from the latest NEWS2
    score: 12-hourly at 0, 4-hourly when low, hourly at low-medium or medium, every 30
    minutes when high; the admission's start before the first set), ``overdue`` and
    ``minutes_late``, the latest ``score`` and ``risk``. Soonest first; the whole list."""
    _known("ward", ward, "Ward", required=True)
    result = queries.observations_due(get_store(), ward)
    return _answer(request, [_snake(r) for r in result.rows], continuation=None,
                   generation=result.generation, lag=_lag())


@router.get("/at-risk", response=ANSWERS,
            summary="Patients at risk: NEWS2 medium or high, or a single 3")
@worklist_read("read_observation_worklists")
def at_risk(request: HttpRequest, department: Text(40), ward: Text(40) = "",
            sort: AtRiskSort = "score", dir: Dir = "asc", page: PageToken | None = PAGE,
            page_size: int = Query(50, ge=1, le=200), total: bool = TOTAL) -> Any:
    """One item per patient of the department (``ward``: of that ward) whose latest score
    is low-medium, medium or high: ``score``, ``risk``, ``previous_score`` and ``trend``
    (the change since the set before), ``taken_at``, ``escalated`` (false until someone is
    told: ``POST /api/v1/patients/{id}/observations/{observation_id}/escalations``)."""
    _known("department", department, "Department", required=True)
    _known("ward", ward, "Ward")
    return _page(request, queries.at_risk(department, ward=ward, sort=sort,
                                          descending=dir == "desc"), page, page_size, total)
