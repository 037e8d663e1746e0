from __future__ import annotations

from django.apps import AppConfig

from hisadmin.core import keys, updates
from hisadmin.core.consumers import register_consumer, register_sweeper
from hisadmin.core.store import register_indexes, register_view_partitions
from patients.domain.events import EventType
from worklists.delivery import catch_up
from worklists.delivery.tasks import PAGE_TASK, QUEUE
from worklists.persistence import VIEW_PARTITIONS
from worklists.persistence.ward_shifts import WARD_STREAM
from worklists.projection.schema import COMPOSITE_INDEXES
from worklists.read.lag import updates_stopped


class WorklistsConfig(AppConfig):
    name = "worklists"

    def ready(self) -> None:
        # The views container holds what the projections write, its policy the view queries.
        register_view_partitions(*VIEW_PARTITIONS)
        register_indexes(COMPOSITE_INDEXES, container="views")
        # Every event of every patient's stream: the projections decide what matters. A
        # change-feed page is one message, applied under one write of the views.
        register_consumer(PAGE_TASK, queue=QUEUE, stream_prefix=keys.PATIENT, per_page=True)
        # A ward's nurses by bed per shift ("My patients"), in the same page messages.
        register_consumer(PAGE_TASK, queue=QUEUE, stream_prefix=WARD_STREAM,
                          event_types=[EventType.NURSES_ASSIGNED], per_page=True)
        register_sweeper("shift-rows", catch_up.start_thread)  # once per relay start
        updates.register(updates_stopped)  # the "updates stopped" notice of every live page
