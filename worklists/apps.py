from __future__ import annotations

from django.apps import AppConfig

from hisadmin.core.store import register_indexes
from worklists.projection.schema import COMPOSITE_INDEXES


class WorklistsConfig(AppConfig):
    name = "worklists"

    def ready(self) -> None:
        register_indexes(COMPOSITE_INDEXES)  # the container's policy serves this app's queries
