"""The stay's latest NEWS2 on the admission row and each observation set in its own table."""

from __future__ import annotations

import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('relational', '0003_no_known_allergies'),
    ]

    operations = [
        migrations.CreateModel(
            name='ObservationSet',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, primary_key=True, serialize=False)),
                ('taken_at', models.DateTimeField()),
                ('values', models.JSONField()),
                ('score', models.PositiveSmallIntegerField(null=True)),
                ('risk', models.CharField(blank=True, max_length=12)),
                ('complete', models.BooleanField()),
                ('next_due_at', models.DateTimeField(null=True)),
                ('recorded_at', models.DateTimeField()),
                ('recorded_by', models.CharField(max_length=150)),
            ],
        ),
        migrations.AddField(
            model_name='admission',
            name='news2_next_due',
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name='admission',
            name='news2_risk',
            field=models.CharField(blank=True, max_length=12),
        ),
        migrations.AddField(
            model_name='admission',
            name='news2_score',
            field=models.PositiveSmallIntegerField(null=True),
        ),
        migrations.AddField(
            model_name='admission',
            name='news2_taken_at',
            field=models.DateTimeField(null=True),
        ),
        migrations.AddIndex(
            model_name='admission',
            index=models.Index(condition=models.Q(('status', 'active')), fields=['ward', 'news2_next_due'], name='observations_due'),
        ),
        migrations.AddIndex(
            model_name='admission',
            index=models.Index(condition=models.Q(('news2_risk__in', ('low-medium', 'medium', 'high')), ('status', 'active')), fields=['department', '-news2_score'], name='at_risk'),
        ),
        migrations.AddField(
            model_name='observationset',
            name='admission',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, to='relational.admission'),
        ),
        migrations.AddField(
            model_name='observationset',
            name='patient',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='observations', to='relational.patient'),
        ),
        migrations.AddIndex(
            model_name='observationset',
            index=models.Index(fields=['patient', '-taken_at'], name='observation_patient'),
        ),
    ]
