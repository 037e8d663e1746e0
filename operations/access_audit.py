"""The access audit's shell side: the middleware that records page and API views in the
queue (``hisadmin.core.access_log``; ``hisadmin.apps`` gives it the Django-database sink).

A view is a successful ``GET`` of a URL naming one patient (``patient_id`` among its
arguments): the chart, the medication record, an order's page, the forms that show the
record, and every ``/api/v1/patients/{patient_id}/…`` read. A view whose URL does not name
its patient notes what it showed (``access_log.note_views``: an MRN lookup, one view per
patient; ``access_log.note_list``: a worklist or a list in the API, one list-view record
with the ids shown), and this middleware records that too, on a successful answer. Every
such read counts, a timed refresh too (a header saying "only a refresh" would be the
client's word, and would let anyone read unrecorded). The FHIR facade records its own
reads (it knows the patients only from the resources it answers with).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from hisadmin.core import access_log
from hisadmin.core.access_log import Access, Channel

API_PREFIX = "/api/"
PARAM = re.compile(r"<(?:\w+:)?(\w+)>")
# The API's parts in words, by the route's segments after the patient's id.
API_PARTS = {
    "": "Record",
    "mar": "Medication record",
    "orders": "Orders",
    "orders/order_id": "Order",
    "admissions": "Admissions",
    "events": "History",
    "results": "Results",
    "allergies": "Allergies",
}


def client_address(request: HttpRequest) -> str:
    """The address the server saw (a proxy's own unless the proxy sets REMOTE_ADDR)."""
    return str(request.META.get("REMOTE_ADDR", ""))[:45]


def access_of(request: HttpRequest, user: Any, patient_id: str, part: str, channel: str,
              listed: tuple[str, ...] = ()) -> Access:
    return Access(
        at=timezone.now(),
        patient_id=patient_id[:64],
        part=part[:80],
        channel=channel,
        user_id=getattr(user, "pk", None),
        username=user.get_username() if user is not None else "",
        client=client_address(request),
        listed=tuple(p[:64] for p in listed),
    )


def _api_part(route: str) -> str:
    after = route.split("patient_id>", 1)[1] if "patient_id>" in route else ""
    key = PARAM.sub(lambda m: m.group(1), after).strip("/")
    return API_PARTS.get(key, key.replace("/", " ").replace("_", " ").capitalize() or "Record")


class AccessAuditMiddleware:
    """Records each successful read of one patient's record by a page or the JSON API."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.method not in ("GET", "HEAD") or not 200 <= response.status_code < 300:
            return response
        match = getattr(request, "resolver_match", None)
        patient_id = match.kwargs.get("patient_id") if match is not None else None
        noted = access_log.noted(request)
        if not patient_id and not noted:  # a header saying "a refresh" is not trusted here
            return response
        # The API's bearer-token user is set by its authenticator, after this middleware ran.
        user = getattr(request, "auth", None) or request.user
        if not getattr(user, "is_authenticated", False):
            return response
        if request.path.startswith(API_PREFIX):
            part = _api_part(match.route) if patient_id else _api_list_part(request.path)
            channel = Channel.API
        else:
            part, channel = admin.site.page_label(match.url_name), Channel.PAGE  # type: ignore[attr-defined]
        if patient_id:
            access_log.record(access_of(request, user, str(patient_id), part, channel))
        for note in noted:
            if note.listed:
                access_log.record(access_of(request, user, "", note.part or part, channel,
                                            listed=note.patient_ids))
            else:
                for shown in note.patient_ids:
                    access_log.record(access_of(request, user, shown, note.part or part,
                                                channel))
        return response


def _api_list_part(path: str) -> str:
    """``/api/v1/worklists/my-orders`` → "Worklists: my-orders"; ``/api/v1/wards/MED-1/beds``
    → "Wards: MED-1 beds"."""
    area, _, rest = path.removeprefix(API_PREFIX).partition("/")[2].strip("/").partition("/")
    words = rest.replace("/", " ")
    return f"{area.capitalize()}: {words}" if words else area.capitalize()
