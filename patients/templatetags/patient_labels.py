"""Template filters for the patient pages' words: instants as people read them."""

from __future__ import annotations

from django import template

from hisadmin.core.local_time import human_time

register = template.Library()


@register.filter
def when(value: object) -> str:
    """A stored instant in words, in the hospital's time ("Wed 25 Nov, 14:00"); "" for
    nothing. The same as the ``hospital_time`` library's ``when``, for templates that load
    this one."""
    return human_time(value)
