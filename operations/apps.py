from __future__ import annotations

from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """The operator's side: backup and restore, /healthz, the access audit (who viewed
    which record) and its report and pruning, the security check, store provisioning.
    AccessRecord keeps its ``hisadmin`` label (hisadmin.core.models)."""

    name = "operations"
