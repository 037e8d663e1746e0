"""Template filters for the chart's Results section."""

from __future__ import annotations

from typing import Any

from django import template

from patients.domain.results import resulted as resulted_orders

register = template.Library()


@register.filter
def resulted(orders: list[dict[str, Any]]) -> list[Any]:
    """The orders with results, newest result first."""
    return resulted_orders(orders or [])
