from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate

from hisadmin.core import access_log
from hisadmin.core.roles import ensure_groups


def _sync_role_groups(sender: AppConfig, **kwargs: Any) -> None:
    """After ``migrate`` (once the permissions exist): the role groups and exactly the
    permissions the roles table gives them."""
    ensure_groups()


class HisadminConfig(AppConfig):
    name = "hisadmin"
    verbose_name = "API access"  # "Administration" is the reference-data section

    def ready(self) -> None:
        post_migrate.connect(_sync_role_groups, sender=self, dispatch_uid="his-role-groups")
        # Who viewed which record goes to Django's database (docs/access-audit.md says why).
        access_log.configure(self.get_model("AccessRecord").write_many)
