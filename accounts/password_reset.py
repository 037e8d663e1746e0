"""A password someone else set, and the user's own "change password".

When an admin resets another user's password it is a security event (``password reset``,
the admin the actor). At that user's next login the session is marked: every page leads to
"Change password" with the message "Your password was reset by … on …; choose a new one",
until they have (``password changed``). Nothing new is stored for it: the mark is read
from the security events at login (the latest reset after the user's latest own change).

"Change password" is throttled as the login is (django-axes, by username and address): a
wrong old password counts as a failed login, and once the pair is locked the form answers
the 429 page, even to the right one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from django.contrib import messages
from django.contrib.auth import authenticate
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from accounts import staff
from accounts.models import SecurityEvent
from accounts.two_factor import locked_out
from hisadmin.core.local_time import human_time
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import problem, problem_type

SESSION_KEY = "his_password_reset_by"
# What a user whose password was reset may still open: the form itself and the way out.
OPEN_WHILE_RESET = ("admin:password_change", "admin:password_change_done", "admin:logout",
                    "admin:jsi18n")


def pending_reset(user: Any) -> SecurityEvent | None:
    """The latest reset of ``user``'s password by someone else, when the user has not
    changed it themself since."""
    about = SecurityEvent.objects.filter(target=staff.user_target(user))
    reset = about.filter(action=SecurityEvent.PASSWORD_RESET).order_by("-at", "-pk").first()
    if reset is None:
        return None
    changed = about.filter(action=SecurityEvent.PASSWORD_CHANGED, at__gte=reset.at,
                           pk__gt=reset.pk).exists()
    return None if changed else reset


@receiver(user_logged_in, dispatch_uid="his_password_reset_notice")
def _notice_at_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any
                     ) -> None:
    if request is None or not hasattr(request, "session"):
        return
    reset = pending_reset(user)
    if reset is None:
        request.session.pop(SESSION_KEY, None)
        return
    request.session[SESSION_KEY] = {"by": reset.actor, "at": reset.at.isoformat()}
    messages.warning(request, f"Your password was reset by {reset.actor} on "
                     f"{human_time(reset.at)}. Choose a new one to go on.")


class MustChangePassword:
    """Pages of a session whose password was reset by someone else lead to "Change
    password" until the user has chosen a new one; the API and FHIR, called with that
    session, answer 403 ``password-change-required`` (a bearer token is not the session:
    its own owner's)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        reset = session.get(SESSION_KEY) if session is not None else None
        if not reset:
            return self.get_response(request)
        if request.path.startswith("/admin/") \
                and request.path not in {reverse(n) for n in OPEN_WHILE_RESET}:
            return HttpResponseRedirect(reverse("admin:password_change"))
        if request.path.startswith(("/api/", "/fhir/")) \
                and not request.headers.get("Authorization"):
            return _change_first(request, reset["by"])
        return self.get_response(request)


def _change_first(request: HttpRequest, by: str) -> HttpResponse:
    """The 403 for an API or FHIR call made with the session of a user whose password was
    reset: a problem of type ``…/password-change-required`` under /api/, an OperationOutcome
    (``forbidden``) under /fhir/."""
    detail = (f"Your password was reset by {by}: choose a new one at "
              f"{reverse('admin:password_change')} before using this session here.")
    if request.path.startswith("/fhir/"):
        body = {"resourceType": "OperationOutcome",
                "issue": [{"severity": "error", "code": "forbidden", "diagnostics": detail}]}
        return HttpResponse(json.dumps(body), status=403, content_type="application/fhir+json")
    return problem(request, 403, "Password change required", detail,
                   type=problem_type("password-change-required"))


def reset_by_other(request: HttpRequest, user: Any) -> None:
    """Record that ``request.user`` set ``user``'s password (or the user their own)."""
    actor = actor_for(request.user)
    if user.pk == request.user.pk:
        SecurityEvent.record(actor, SecurityEvent.PASSWORD_CHANGED, staff.user_target(user),
                             "by the user, in the admin")
        return
    SecurityEvent.record(actor, SecurityEvent.PASSWORD_RESET, staff.user_target(user),
                         f"set by {actor.username}; the user is told at the next login and "
                         "chooses a new one")


def throttled_change(request: HttpRequest, view: Callable[..., HttpResponse],
                     extra_context: dict[str, Any] | None = None) -> HttpResponse:
    """Run the admin's "change password" ``view`` behind the login's lockout; a change made
    is recorded and ends the reset notice."""
    if request.method == "POST" and request.user.is_authenticated:
        credentials = {"username": request.user.get_username()}
        if AxesProxyHandler.is_locked(request, credentials):
            return locked_out(request, credentials=credentials)
        # A wrong old password is a failed login to django-axes (it counts the failure).
        if authenticate(request, username=credentials["username"],
                        password=request.POST.get("old_password", "")) is None \
                and AxesProxyHandler.is_locked(request, credentials):
            return locked_out(request, credentials=credentials)
    response = view(request, extra_context)
    if request.method == "POST" and response.status_code == 302:
        SecurityEvent.record(actor_for(request.user), SecurityEvent.PASSWORD_CHANGED,
                             staff.user_target(request.user), "by the user")
        request.session.pop(SESSION_KEY, None)
    return response
