"""The hospital as a Django team would model it: normalised tables, FKs, partial indexes.

Worklists are JOIN/filter queries over these tables; the indexes below are the ones those
queries need (partial on the active rows, so history does not slow them down).
"""

from __future__ import annotations

import unicodedata
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

ACTIVE_ORDER = Q(status__in=("created", "ready", "in_progress"))
AT_RISK = ("low-medium", "medium", "high")  # the risks Patients at risk lists


def fold(text: str) -> str:
    """Case- and accent-insensitive search key, as the product's name search uses."""
    decomposed = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c))
                    .upper().split())


class Department(models.Model):
    code = models.CharField(max_length=40, primary_key=True)
    name = models.CharField(max_length=100)


class Ward(models.Model):
    code = models.CharField(max_length=40, primary_key=True)
    department = models.ForeignKey(Department, on_delete=models.PROTECT)
    name = models.CharField(max_length=100)


class Bed(models.Model):
    ward = models.ForeignKey(Ward, on_delete=models.PROTECT)
    code = models.CharField(max_length=20)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ward", "code"], name="bed_unique")]


class Patient(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    mrn = models.CharField(max_length=20, unique=True)
    given_name = models.CharField(max_length=100)
    family_name = models.CharField(max_length=100)
    name_key = models.CharField(max_length=210)  # fold(family + " " + given)
    birth_date = models.DateField()
    sex = models.CharField(max_length=10)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # Allergies asked and none known (a medication order needs this or an allergy).
    no_known_allergies_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [models.Index(fields=["name_key"], name="patient_name_key")]


class Allergy(models.Model):
    patient = models.ForeignKey(Patient, on_delete=models.CASCADE, related_name="allergies")
    substance = models.CharField(max_length=100)
    reaction = models.CharField(max_length=200, blank=True)
    severity = models.CharField(max_length=10)
    recorded_at = models.DateTimeField()
    recorded_by = models.CharField(max_length=150)


class Admission(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    patient = models.ForeignKey(Patient, on_delete=models.CASCADE, related_name="admissions")
    status = models.CharField(max_length=10)  # active | ended
    department = models.ForeignKey(Department, on_delete=models.PROTECT)
    ward = models.ForeignKey(Ward, on_delete=models.PROTECT)
    bed = models.ForeignKey(Bed, null=True, blank=True, on_delete=models.PROTECT)
    attending_id = models.CharField(max_length=40)
    attending_name = models.CharField(max_length=100)
    reason = models.CharField(max_length=500)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True)
    disposition = models.CharField(max_length=40, blank=True)
    version = models.PositiveIntegerField(default=1)
    # The stay's latest NEWS2 score, kept on the row by the command that records a set (what
    # Observations due and Patients at risk read, as the product's projection keeps them).
    news2_score = models.PositiveSmallIntegerField(null=True)
    news2_risk = models.CharField(max_length=12, blank=True)
    news2_taken_at = models.DateTimeField(null=True)
    news2_next_due = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            # One active stay per patient and one patient per bed, enforced by the database.
            models.UniqueConstraint(fields=["patient"], condition=Q(status="active"),
                                    name="one_active_admission"),
            models.UniqueConstraint(fields=["bed"], condition=Q(status="active"),
                                    name="one_patient_per_bed"),
        ]
        indexes = [
            models.Index(fields=["department", "ward"], condition=Q(status="active"),
                         name="census"),
            models.Index(fields=["patient", "-started_at"], name="admission_patient"),
            models.Index(fields=["ward", "news2_next_due"], condition=Q(status="active"),
                         name="observations_due"),
            models.Index(fields=["department", "-news2_score"],
                         condition=Q(status="active", news2_risk__in=AT_RISK),
                         name="at_risk"),
        ]


class Order(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    patient = models.ForeignKey(Patient, on_delete=models.CASCADE, related_name="orders")
    admission = models.ForeignKey(Admission, on_delete=models.CASCADE, related_name="orders")
    kind = models.CharField(max_length=12)  # medication | imaging | lab
    status = models.CharField(max_length=12)
    urgency = models.CharField(max_length=10)
    description = models.CharField(max_length=200)
    department = models.ForeignKey(Department, on_delete=models.PROTECT)
    ward = models.ForeignKey(Ward, on_delete=models.PROTECT)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL)
    assignee_name = models.CharField(max_length=150, blank=True)
    placed_at = models.DateTimeField()
    placed_by = models.CharField(max_length=40)
    cancel_reason = models.CharField(max_length=300, blank=True)
    version = models.PositiveIntegerField(default=1)
    # medication
    medication_code = models.CharField(max_length=20, blank=True)
    medication_name = models.CharField(max_length=100, blank=True)
    dose = models.DecimalField(max_digits=10, decimal_places=3, null=True)
    unit = models.CharField(max_length=20, blank=True)
    route = models.CharField(max_length=10, blank=True)
    frequency = models.CharField(max_length=10, blank=True)
    as_needed = models.BooleanField(default=False)
    # imaging
    modality = models.CharField(max_length=10, blank=True)
    body_part = models.CharField(max_length=20, blank=True)
    # lab
    test_code = models.CharField(max_length=20, blank=True)
    test_name = models.CharField(max_length=100, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["department", "placed_at"], condition=ACTIVE_ORDER,
                         name="active_orders"),
            models.Index(fields=["assignee", "placed_at"], condition=ACTIVE_ORDER,
                         name="my_orders"),
            models.Index(fields=["admission", "status"], name="order_admission"),
        ]


class Administration(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="administrations")
    at = models.DateTimeField()
    dose = models.DecimalField(max_digits=10, decimal_places=3)
    unit = models.CharField(max_length=20)
    by = models.CharField(max_length=150)
    note = models.CharField(max_length=300, blank=True)


class ObservationSet(models.Model):
    """A set of vital signs as recorded, with its NEWS2 (scored by the product's pure
    domain function: the comparison is of storage, not of arithmetic)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4)
    patient = models.ForeignKey(Patient, on_delete=models.CASCADE, related_name="observations")
    admission = models.ForeignKey(Admission, null=True, on_delete=models.SET_NULL)
    taken_at = models.DateTimeField()
    values = models.JSONField()
    score = models.PositiveSmallIntegerField(null=True)
    risk = models.CharField(max_length=12, blank=True)
    complete = models.BooleanField()
    next_due_at = models.DateTimeField(null=True)
    recorded_at = models.DateTimeField()
    recorded_by = models.CharField(max_length=150)

    class Meta:
        indexes = [models.Index(fields=["patient", "-taken_at"], name="observation_patient")]


class AuditEvent(models.Model):
    """The audit trail, written in the command's transaction (as the product's events are)."""

    patient = models.ForeignKey(Patient, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=40)
    occurred_at = models.DateTimeField()
    actor = models.CharField(max_length=150)
    data = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["patient", "seq"], name="event_seq")]


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    key_hash = models.CharField(max_length=64, unique=True)
