from __future__ import annotations

from django.apps import AppConfig


class WorklistsConfig(AppConfig):
    name = "worklists"
