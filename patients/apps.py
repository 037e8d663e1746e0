from __future__ import annotations

from django.apps import AppConfig

from hisadmin.core import keys
from hisadmin.core.consumers import register_consumer
from hisadmin.core.store import register_indexes
from patients.persistence import duplicates
from patients.persistence.documents import COMPOSITE_INDEXES
from patients.use_cases.beds import BED_EVENTS
from patients.use_cases.duplicates import DUPLICATE_EVENTS
from patients.use_cases.merges import MERGE_STEPS


class PatientsConfig(AppConfig):
    name = "patients"

    def ready(self) -> None:
        register_indexes(COMPOSITE_INDEXES)  # the container's policy serves this app's queries
        register_indexes(duplicates.COMPOSITE_INDEXES)  # the listed pairs, by pair id
        # A page's follow-ups in one message (patients.tasks.follow_up_page), on the worker's
        # default queue.
        register_consumer("patients.follow_up_page", queue="celery",
                          stream_prefix=keys.PATIENT,
                          event_types=(*BED_EVENTS, *MERGE_STEPS, *DUPLICATE_EVENTS),
                          per_page=True)
