"""Django-side models: API tokens (users and groups are Django's own)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from hisadmin.core.access_log import Channel

if TYPE_CHECKING:
    from datetime import datetime

    from hisadmin.core.access_log import Access


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token for integrators. Only its hash is stored; the raw token is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What system uses this token.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.BooleanField(default=False)

    class Meta:
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(cls, user: object, name: str) -> tuple[ApiToken, str]:
        raw = "his_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, key_hash=hash_token(raw), prefix=raw[4:12])
        return token, raw


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


class AccessRecord(models.Model):
    """One view of one patient's record (``hisadmin.core.access_log``): who, when, which
    patient, which part, from where. Append-only; kept in Django's database, indexed by
    patient and time (the "who viewed this record" page and ``access_report``) and by user.
    The username is copied: the record outlives a renamed or deleted account."""

    at = models.DateTimeField()
    patient_id = models.CharField(max_length=64)
    part = models.CharField(max_length=80)
    channel = models.CharField(max_length=8)
    user_id = models.IntegerField(null=True)
    username = models.CharField(max_length=150)
    client = models.CharField(max_length=45)  # an IPv6 address at most

    class Meta:
        verbose_name = "record access"
        indexes = [models.Index(fields=["patient_id", "at"], name="access_by_patient"),
                   models.Index(fields=["username", "at"], name="access_by_user")]

    @classmethod
    def of_patient(cls, patient_id: str, since: datetime | None = None
                   ) -> models.QuerySet[AccessRecord]:
        """The patient's record's views, newest first (from ``since`` on, if given)."""
        found = cls.objects.filter(patient_id=patient_id)
        if since is not None:
            found = found.filter(at__gte=since)
        return found.order_by("-at", "-pk")

    def channel_label(self) -> str:
        return Channel.LABELS.get(self.channel, self.channel)

    @classmethod
    def write_many(cls, accesses: Sequence[Access]) -> None:
        """The access log's sink: one ``INSERT`` per batch."""
        cls.objects.bulk_create([
            cls(at=a.at, patient_id=a.patient_id, part=a.part, channel=a.channel,
                user_id=a.user_id, username=a.username, client=a.client) for a in accesses])
