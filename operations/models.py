"""The access log's model: one row per view of a patient's record or per list view that
showed patients (:mod:`hisadmin.core.access_log` queues them; the writer thread writes them
here in batches). Kept under the ``hisadmin`` app label, where it was first migrated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.db import models

from hisadmin.core.access_log import Channel

if TYPE_CHECKING:
    from datetime import datetime

    from hisadmin.core.access_log import Access


class AccessRecord(models.Model):
    """One view of one patient's record (``hisadmin.core.access_log``): who, when, which
    patient, which part, from where — or one list view (a worklist, a name search, a list
    in the API): ``patient_id`` empty and ``listed`` the ids of the patients it showed.
    Append-only; kept in Django's database, indexed by patient and time (the "who viewed
    this record" page and ``access_report``) and by user, pruned by date
    (``prune_access_log``). The username is copied: the record outlives a renamed or
    deleted account."""

    at = models.DateTimeField()
    patient_id = models.CharField(max_length=64)  # "" for a list view
    part = models.CharField(max_length=80)
    channel = models.CharField(max_length=8)
    user_id = models.IntegerField(null=True)
    username = models.CharField(max_length=150)
    client = models.CharField(max_length=45)  # an IPv6 address at most
    # A list view's patient ids, space-separated with a space at both ends, so one patient's
    # list views are found with ``contains " <id> "`` on any database (one row per list view
    # keeps a refreshing worklist to one small insert per refresh).
    listed = models.TextField(blank=True, default="")

    class Meta:
        app_label = "hisadmin"  # its table, permissions and admin URLs, as first migrated
        verbose_name = "record access"
        indexes = [models.Index(fields=["patient_id", "at"], name="access_by_patient"),
                   models.Index(fields=["username", "at"], name="access_by_user"),
                   models.Index(fields=["at"], name="access_by_time")]

    @classmethod
    def of_patient(cls, patient_id: str, since: datetime | None = None
                   ) -> models.QuerySet[AccessRecord]:
        """The patient's record's views and the list views that showed the patient, newest
        first (from ``since`` on, if given)."""
        found = cls.objects.filter(
            models.Q(patient_id=patient_id)
            | models.Q(patient_id="", listed__contains=f" {patient_id} ") if patient_id
            else models.Q(pk__in=()))
        if since is not None:
            found = found.filter(at__gte=since)
        return found.order_by("-at", "-pk")

    def channel_label(self) -> str:
        return Channel.LABELS.get(self.channel, self.channel)

    def listed_count(self) -> int:
        """How many patients a list view showed (0 for a view of one record)."""
        return len(self.listed.split())

    def is_list(self) -> bool:
        return not self.patient_id and bool(self.listed)

    @classmethod
    def write_many(cls, accesses: Sequence[Access]) -> None:
        """The access log's sink: one ``INSERT`` per batch."""
        cls.objects.bulk_create([
            cls(at=a.at, patient_id=a.patient_id, part=a.part, channel=a.channel,
                user_id=a.user_id, username=a.username, client=a.client,
                listed=f" {' '.join(a.listed)} " if a.listed else "") for a in accesses])

    @classmethod
    def prune(cls, before: datetime) -> int:
        """Delete the records older than ``before`` (one ``DELETE``); returns how many."""
        deleted, _ = cls.objects.filter(at__lt=before).delete()
        return deleted
