from __future__ import annotations

from axes.apps import AppConfig as AxesConfig
from django.apps import AppConfig
from django_otp.plugins.otp_totp.apps import DefaultConfig as OtpTotpConfig


class AccountsConfig(AppConfig):
    """Staff and their access: the roster import and roles, API tokens, the admins'
    second factor, the login lockout and idle logout. Its models (ApiToken,
    SecurityEvent) keep their ``hisadmin`` label: tables, permissions and admin URLs
    are named for it (hisadmin.core.models)."""

    name = "accounts"
    default = True  # the module also names the third-party apps' configurations below

    def ready(self) -> None:
        from accounts import password_reset  # noqa: F401 - its login signal's receiver


class SecondFactorConfig(OtpTotpConfig):
    """django-otp's TOTP devices, named for people in the admin's menu."""

    verbose_name = "Second factor"


class LoginLockoutConfig(AxesConfig):
    """django-axes' attempts and logs, named for people in the admin's menu."""

    verbose_name = "Login lockouts"
