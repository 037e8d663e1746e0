from __future__ import annotations

from django.apps import AppConfig

from hisadmin.core import keys
from hisadmin.core.consumers import register_consumer
from webhooks.delivery.tasks import FAN_OUT, FAN_OUT_QUEUE


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self) -> None:
        # Every event of every patient's stream: the fan-out asks the subscriptions.
        register_consumer(FAN_OUT, queue=FAN_OUT_QUEUE, stream_prefix=keys.PATIENT)
