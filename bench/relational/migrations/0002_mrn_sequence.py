"""MRNs from a database sequence on PostgreSQL, as a team would do there.

On SQLite writers are serialised (``transaction_mode=IMMEDIATE``), so the max + 1 inside the
registration's transaction cannot race.
"""

from __future__ import annotations

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def create_sequence(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE SEQUENCE IF NOT EXISTS relational_mrn_seq")


def drop_sequence(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP SEQUENCE IF EXISTS relational_mrn_seq")


class Migration(migrations.Migration):
    dependencies = [("relational", "0001_initial")]
    operations = [migrations.RunPython(create_sequence, drop_sequence)]
