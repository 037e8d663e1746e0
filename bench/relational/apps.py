from __future__ import annotations

from django.apps import AppConfig


class RelationalConfig(AppConfig):
    name = "bench.relational"
    label = "relational"
    default_auto_field = "django.db.models.BigAutoField"
