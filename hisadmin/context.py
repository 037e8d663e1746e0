"""Template context every page gets from the project (``TEMPLATES`` context processors)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from hisadmin.core import policy


def diagnostics(request: HttpRequest) -> dict[str, Any]:
    """``show_timings``: whether the page shows how long its reads took ("(2.2 ms)" beside
    "updated just now"): for those who run the system, not for the ward."""
    user = getattr(request, "user", None)
    return {"show_timings": bool(user is not None and user.is_authenticated
                                 and policy.allows(user, "read_server_timings"))}
