"""Allergies asked and none known: a medication order needs this or an allergy."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("relational", "0002_mrn_sequence")]
    operations = [
        migrations.AddField(model_name="patient", name="no_known_allergies_at",
                            field=models.DateTimeField(null=True)),
    ]
