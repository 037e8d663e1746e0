"""Template filters for the patient pages' words: instants as people read them."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def when(value: str | None) -> str:
    """An ISO instant as stored (``2026-11-23T09:15:00+00:00``) → ``2026-11-23 09:15``;
    "" for nothing. Stored instants are UTC, which the pages' column headings say."""
    if not value:
        return ""
    return str(value)[:16].replace("T", " ")
