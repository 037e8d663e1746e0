from __future__ import annotations

from django.apps import AppConfig


class WorklistsConfig(AppConfig):
    name = "worklists"

    def ready(self) -> None:
        # Imported here: the app registry must be ready before the app's modules load.
        from hisadmin.core.store import register_indexes
        from worklists.projection.schema import COMPOSITE_INDEXES

        register_indexes(COMPOSITE_INDEXES)
