"""Template filters for dates and times in the hospital's time, in words
(:mod:`hisadmin.core.local_time`): ``{% load hospital_time %}`` then ``{{ x|when }}``
("Wed 25 Nov, 14:00"), ``{{ x|when:"seconds" }}``, ``{{ x|day }}`` ("Wed 25 Nov 2026";
``{{ born|day:"no weekday" }}``, "1 Jan 1960") and
``{{ x|clock }}`` ("14:00"). Each takes a datetime or stored ISO text."""

from __future__ import annotations

from django import template

from hisadmin.core.local_time import clock_time, human_date, human_time

register = template.Library()


@register.filter
def when(value: object, arg: str = "") -> str:
    """An instant in words, in the hospital's time ("" for nothing)."""
    return human_time(value, seconds=arg == "seconds")


@register.filter
def day(value: object, arg: str = "") -> str:
    """A date (or an instant's local day) in words, with its year; ``"no weekday"`` leaves
    the weekday out (a date of birth)."""
    return human_date(value, weekday=arg != "no weekday")


@register.filter
def clock(value: object) -> str:
    """An instant's local wall-clock time, HH:MM."""
    return clock_time(value)
