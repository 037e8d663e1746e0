"""The shell's own model: the stored answers of requests sent with an Idempotency-Key
(:mod:`hisadmin.core.idempotency`). The features' models live in their apps
(:mod:`accounts.models`, :mod:`operations.models`) under the same ``hisadmin`` label."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class IdempotencyRecord(models.Model):
    """The stored response of a creating POST, replayed when the same Idempotency-Key returns."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    key = models.CharField(max_length=200)
    method_path = models.CharField(max_length=300)
    request_hash = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField()
    body = models.TextField()
    headers = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="uniq_idem_key")]
