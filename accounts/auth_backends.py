"""Authentication backends: django-axes' throttling for every login that comes with a
request, and nothing in the way of one that does not."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class ThrottledLogins(AxesStandaloneBackend):
    """django-axes' check, skipped when ``authenticate`` has no request: a login form always
    passes one (and is throttled by username and address); code that checks a password
    without one (``Client.login`` in tests, a script) has no address to lock and would
    otherwise fail with ``AxesBackendRequestParameterRequired``."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if request is None:
            return None  # the next backend checks the password
        return super().authenticate(request, username, password, **kwargs)
