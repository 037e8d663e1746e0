"""JSON API router for patients (stub; the app's owner fills it)."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["patients"])
