"""The Celery app. Broker: REDIS_URL (the launcher sets it to the embedded redis).

Two worker options serve the one-machine mode of the launcher (``HIS_PROCESSES=light``);
without them a worker is a plain Celery worker, as production runs it:

``--relay``
    run the change-feed relay as a thread inside the worker
    (:mod:`worklists.delivery.worker_relay`) instead of a ``manage.py run_relay`` process.
``--webhooks-lane N`` (thread pool only)
    also consume the ``webhooks`` queue, on a channel of its own, and run its tasks on ``N``
    threads of their own: a slow webhook receiver holds up webhook deliveries only, never the
    projections. The queues named with ``-Q`` keep the worker's prefetch and its
    ``--concurrency`` threads; the lane's channel has no prefetch limit, so webhook messages
    waiting for a lane thread never take a prefetch slot a projection needs (they are ids
    only, and a backed-off delivery waits as one scheduled message per patient and
    subscription).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from celery import Celery, bootsteps, signals
from celery.concurrency.base import apply_target
from celery.concurrency.thread import ApplyResult
from celery.concurrency.thread import TaskPool as ThreadTaskPool
from click import Option
from django.conf import settings
from kombu import Consumer, Exchange, Queue

from hisadmin.core.files import secure_data_dir

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")

app = Celery("hisadmin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["patients", "worklists.delivery", "webhooks.delivery"])


@signals.worker_init.connect
def _private_files(**_: Any) -> None:
    """A worker creates var/'s files (the embedded store's, its logs) for its owner alone,
    whatever the umask it was started with; this module is also imported by every process
    that imports hisadmin, which must keep its own umask."""
    secure_data_dir(settings.VAR_DIR)


WEBHOOKS_QUEUE = "webhooks"  # webhooks.delivery.tasks.QUEUE (the shell names it, never imports)


class LanedThreadPool(ThreadTaskPool):
    """The thread pool, with the tasks of one queue on threads of their own."""

    lane_queue = WEBHOOKS_QUEUE
    lane_threads = 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lane = ThreadPoolExecutor(max_workers=self.lane_threads,
                                       thread_name_prefix=f"{self.lane_queue}-lane")

    def in_lane(self, task_name: object) -> bool:
        task = self.app.tasks.get(task_name) if self.app is not None else None
        return getattr(task, "queue", None) == self.lane_queue

    def on_apply(self, target: Any, args: tuple[Any, ...] | None = None,
                 kwargs: dict[str, Any] | None = None, callback: Any = None,
                 accept_callback: Any = None, **_: Any) -> ApplyResult:
        # A request's trace arguments start with the task's name.
        executor = self.lane if args and self.in_lane(args[0]) else self.executor
        return ApplyResult(executor.submit(apply_target, target, args, kwargs, callback,
                                           accept_callback))

    def on_stop(self) -> None:
        self.lane.shutdown(cancel_futures=True)
        super().on_stop()


class WebhooksLane(bootsteps.StartStopStep):
    """Worker step of ``--webhooks-lane N``: swaps in :class:`LanedThreadPool`."""

    def __init__(self, worker: Any, webhooks_lane: int = 0, **kwargs: Any) -> None:
        self.enabled = webhooks_lane > 0
        if self.enabled:
            if not issubclass(worker.pool_cls, ThreadTaskPool):
                raise ValueError("--webhooks-lane needs --pool threads")
            worker.pool_cls = type("LanedThreadPool", (LanedThreadPool,),
                                   {"lane_threads": webhooks_lane})
        super().__init__(worker, **kwargs)


class WebhooksLaneConsumer(bootsteps.ConsumerStep):
    """Consumer step of ``--webhooks-lane N``: the webhooks queue on its own channel, no
    prefetch limit, each message handed to the worker's usual task handling."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, consumer: Any, webhooks_lane: int = 0, **kwargs: Any) -> None:
        self.enabled = webhooks_lane > 0
        self._handler: Any = None
        super().__init__(consumer, **kwargs)

    def start(self, c: Any) -> None:
        self._handler = c.create_task_handler()
        super().start(c)

    def stop(self, c: Any) -> None:
        self._close_quietly(c, cancel_consumers=True)

    def shutdown(self, c: Any) -> None:
        self._close_quietly(c, cancel_consumers=False)

    def _close_quietly(self, c: Any, cancel_consumers: bool) -> None:
        # When the broker connection was lost, Celery restarts the consumer's steps with
        # the connection already dropped (None), or collected: its transport released, its
        # channels closed with it. Nothing is left to cancel; reaching the channel through the
        # released transport only fails (kombu asks the transport's gone client for its
        # parameters: an AttributeError, which no connection-error handler takes).
        if c.connection is None or not c.connection.connected:
            self.consumers = None
            return
        self._close(c, cancel_consumers)

    def get_consumers(self, channel: Any) -> list[Consumer]:
        channel.basic_qos(0, 0, False)  # no prefetch limit on this channel (see module doc)
        queue = Queue(WEBHOOKS_QUEUE, Exchange(WEBHOOKS_QUEUE), routing_key=WEBHOOKS_QUEUE)
        return [Consumer(channel, queues=[queue], on_message=self._handler,
                         accept=app.conf.accept_content, no_ack=False)]


app.user_options["worker"].add(Option(
    ["--relay"], is_flag=True, default=False,
    help="Run the change-feed relay as a thread inside this worker."))
app.user_options["worker"].add(Option(
    ["--relay-lease-ttl"], type=float, default=10.0,
    help="Seconds before a dead relay's feed ranges are taken over (with --relay)."))
app.user_options["worker"].add(Option(
    ["--webhooks-lane"], type=int, default=0,
    help="Also consume the webhooks queue on its own channel and run it on this many "
         "threads of its own (thread pool only)."))
app.steps["worker"].add("worklists.delivery.worker_relay:RelayStep")
app.steps["worker"].add(WebhooksLane)
app.steps["consumer"].add(WebhooksLaneConsumer)
