"""The Celery app. Broker: REDIS_URL (the launcher sets it to the embedded redis)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")

app = Celery("hisadmin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["patients", "worklists.delivery", "webhooks.delivery"])
