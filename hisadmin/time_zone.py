"""The hospital's time zone as every request's current time zone."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from hisadmin.core.inputs import hospital_time_zone


class HospitalTimeZoneMiddleware:
    """Activates ``HOSPITAL_TIME_ZONE`` for the request, so Django's ``|date`` and ``|time``
    filters, ``timezone.localtime``/``localdate`` (a MAR's day, a form's initial time) and
    date-time form fields speak the hospital's time rather than the server's ``TIME_ZONE``.
    Answers keep their instants with offsets: nothing here converts stored values."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        timezone.activate(hospital_time_zone())
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
