"""Admins log in with a password and a one-time code (TOTP, django-otp's devices).

The session is only logged in once both factors are given: after a right password an
admin's user id waits in the session (``PENDING``, at most ``PENDING_SECONDS``) and the code
page either asks for the code of their authenticator app or, the first time, enrols one
(the secret shown as a QR code and as text; the first right code confirms it). Nothing
else is reachable meanwhile, as nobody is logged in. Other roles log in with the password.

Tests log users in with ``force_login``, which skips both factors as it skips the password.
A lost phone: an administrator deletes the user's TOTP device in the admin ("TOTP
devices"), and the next login enrols a new one.
"""

from __future__ import annotations

import base64
import io
import time
from typing import Any
from urllib.parse import quote, urlsplit

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import REDIRECT_FIELD_NAME, get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice

from hisadmin.core.roles import Role, roles_of

PENDING = "his_2fa_pending"  # {"user": pk, "backend": dotted path, "next": url, "at": epoch}
PENDING_SECONDS = 300
DEVICE_NAME = "Authenticator app"


def needs_second_factor(user: Any) -> bool:
    return bool(settings.ADMIN_TWO_FACTOR) and Role.ADMIN in roles_of(user)


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code from your authenticator app",
        max_length=8,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )

    def clean_code(self) -> str:
        code = "".join(self.cleaned_data["code"].split())
        if not code.isdigit() or len(code) != 6:
            raise forms.ValidationError("Enter the 6 digits your authenticator app shows.")
        return code


def landing(request: HttpRequest, target: str | None) -> str:
    """Where a login goes: ``target`` (the ``next`` asked for) when it is a page of this
    site, else the home page. An off-site, malformed or unknown ``next`` is not followed
    (Django's fallback, ``/accounts/profile/``, is no page here)."""
    home = reverse("admin:index")
    if not target or not url_has_allowed_host_and_scheme(
        target, {request.get_host()}, require_https=request.is_secure()
    ):
        return home
    try:
        resolve(urlsplit(target).path)
    except Resolver404:
        return home
    return target


class HisLoginView(LoginView):
    """Django's login, except that an admin's right password leads to the code page."""

    template_name = "admin/login.html"
    authentication_form = AuthenticationForm

    def get_success_url(self) -> str:
        return landing(self.request, self.get_redirect_url())

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        if not needs_second_factor(user):
            return super().form_valid(form)
        self.request.session.cycle_key()  # a fresh session id for the half-done login
        self.request.session[PENDING] = {
            "user": user.pk,
            "backend": user.backend,
            "next": self.get_success_url(),
            "at": time.time(),
        }
        return redirect("his_two_factor")


@never_cache
def login_view(request: HttpRequest) -> HttpResponse:
    """``/admin/login/``: the admin's login page and context, with the two-factor step."""
    if request.method == "GET" and request.user.is_authenticated:
        return HttpResponseRedirect(reverse("admin:index"))
    site = admin.site
    context = {
        **site.each_context(request),
        "title": "Log in",
        "subtitle": None,
        "app_path": request.get_full_path(),
        "username": request.user.get_username(),
    }
    if REDIRECT_FIELD_NAME not in request.GET and REDIRECT_FIELD_NAME not in request.POST:
        context[REDIRECT_FIELD_NAME] = reverse("admin:index")
    request.current_app = site.name
    return HisLoginView.as_view(extra_context=context)(request)


def _pending_user(request: HttpRequest) -> tuple[Any, dict[str, Any]] | None:
    pending = request.session.get(PENDING)
    if not pending or time.time() - float(pending.get("at", 0)) > PENDING_SECONDS:
        request.session.pop(PENDING, None)
        return None
    user = get_user_model().objects.filter(pk=pending["user"], is_active=True).first()
    return (user, pending) if user is not None else None


def _qr_data_uri(uri: str) -> str:
    """The otpauth URI as an SVG QR code in a data: URI (the CSP allows data: images)."""
    # Imported here: qrcode brings Pillow and an XML writer (about 4.5 MB in every process
    # that imports this module) for a page an administrator sees once, at enrolment.
    import qrcode.image.svg

    buffer = io.BytesIO()
    qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage, box_size=8).save(buffer)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()


def _enrolment(user: Any) -> dict[str, Any]:
    device = TOTPDevice.objects.filter(
        user=user, confirmed=False
    ).first() or TOTPDevice.objects.create(user=user, name=DEVICE_NAME, confirmed=False)
    secret = base64.b32encode(device.bin_key).decode().rstrip("=")
    label = quote(f"{settings.OTP_TOTP_ISSUER}:{user.get_username()}")
    uri = (
        f"otpauth://totp/{label}?secret={secret}"
        f"&issuer={quote(settings.OTP_TOTP_ISSUER)}&digits=6&period=30"
    )
    grouped = " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))
    return {"device": device, "secret": grouped, "qr": _qr_data_uri(uri)}


@sensitive_post_parameters("code")
@csrf_protect
@never_cache
def second_factor(request: HttpRequest) -> HttpResponse:
    """``/admin/two-factor/``: the code of a confirmed device, or enrolling the first."""
    found = _pending_user(request)
    if found is None:
        return redirect(f"{reverse(settings.LOGIN_URL)}")
    user, pending = found
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    enrolment = None if device is not None else _enrolment(user)
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        candidate = device or enrolment["device"]  # type: ignore[index]
        allowed, _ = candidate.verify_is_allowed()
        if allowed and candidate.verify_token(form.cleaned_data["code"]):
            if not candidate.confirmed:
                candidate.confirmed = True
                candidate.save(update_fields=["confirmed"])
            del request.session[PENDING]
            user.backend = pending["backend"]
            auth_login(request, user)
            otp_login(request, candidate)
            return HttpResponseRedirect(landing(request, pending.get("next")))
        form.add_error(
            "code",
            "That code is not right (or was used already): wait for the next one and try again."
            if allowed
            else "Too many wrong codes: wait a minute before trying again.",
        )
    context = {
        **admin.site.each_context(request),
        "form": form,
        "enrolment": enrolment,
        "title": "Set up two-step login" if enrolment else "Two-step login",
        "username": user.get_username(),
    }
    return TemplateResponse(request, "admin/his_two_factor.html", context)


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """django-axes' answer to a locked-out login: a 429 page in the admin's look."""
    context = {
        **admin.site.each_context(request),
        "title": "Login locked for now",
        "cooloff_minutes": round(settings.AXES_COOLOFF_TIME * 60),
    }
    return TemplateResponse(request, "admin/locked_out.html", context, status=429).render()
