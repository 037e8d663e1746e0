from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Staff and their access: the roster import and roles, API tokens, the admins'
    second factor, the login lockout and idle logout. Its models (ApiToken,
    SecurityEvent) keep their ``hisadmin`` label: tables, permissions and admin URLs
    are named for it (hisadmin.core.models)."""

    name = "accounts"

    def ready(self) -> None:
        from accounts import password_reset  # noqa: F401 - its login signal's receiver
