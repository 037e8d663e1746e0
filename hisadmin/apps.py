from __future__ import annotations

from django.apps import AppConfig


class HisadminConfig(AppConfig):
    name = "hisadmin"
    verbose_name = "Administration"
