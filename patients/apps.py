from __future__ import annotations

from django.apps import AppConfig

from hisadmin.core.store import register_indexes
from patients.persistence.documents import COMPOSITE_INDEXES


class PatientsConfig(AppConfig):
    name = "patients"

    def ready(self) -> None:
        register_indexes(COMPOSITE_INDEXES)  # the container's policy serves this app's queries
