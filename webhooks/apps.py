from __future__ import annotations

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured

from hisadmin.core import keys
from hisadmin.core.consumers import register_consumer, register_sweeper
from webhooks.delivery import sweeper
from webhooks.delivery.sender import allowed_networks
from webhooks.delivery.tasks import FAN_OUT, FAN_OUT_QUEUE, any_subscription_now


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self) -> None:
        try:  # a bad network stops start-up, not each delivery later
            allowed_networks()
        except ValueError as exc:
            raise ImproperlyConfigured(str(exc)) from None
        # Every event of every patient's stream while there is a subscription at all: the
        # fan-out asks the subscriptions which want it. With none, the relay sends nothing.
        register_consumer(FAN_OUT, queue=FAN_OUT_QUEUE, stream_prefix=keys.PATIENT,
                          gate=any_subscription_now)
        # Beside every relay: re-drive the deliveries (webhooks' and ADT out's) the store
        # says are owed and no live task has.
        register_sweeper("deliveries", sweeper.start_thread)
