"""Template filters for the Results sections (the chart and the order page): results newest
first, and values in words with the precision they were measured at."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from patients.domain.results import STATUS_LABELS, abnormal_in_words, value_text
from patients.domain.results import resulted as resulted_orders

register = template.Library()


@register.filter
def resulted(orders: list[dict[str, Any]]) -> list[Any]:
    """The orders with results, newest result first."""
    return resulted_orders(orders or [])


@register.filter
def result_value(value: Mapping[str, Any]) -> str:
    """A stored value's number to its measured precision ("5.0" stays "5.0")."""
    return value_text(value or {})


@register.filter
def abnormal_words(values: list[Mapping[str, Any]] | None) -> str:
    """A result's flagged values in words, "Sodium 128 mmol/L, low; …" ("" when none)."""
    return "; ".join(abnormal_in_words(values or ()))


@register.filter
def result_status(results: Mapping[str, Any] | None) -> str:
    """"Preliminary", "Final" or "Corrected" (results kept before statuses: final)."""
    return STATUS_LABELS.get(str((results or {}).get("status") or "final"), "Final")


@register.filter
def lab_details(values: list[Mapping[str, Any]] | None) -> bool:
    """Whether any value carries the laboratory's own range or flags (a column for them)."""
    return any(v.get("labRange") or v.get("labFlags") for v in values or ())
