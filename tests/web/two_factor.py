"""Browser tests' second login step: an admin's code, computed as their authenticator app
would (from the secret the enrolment page shows, or from the enrolled device)."""

from __future__ import annotations

import base64
import time

from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice


def code_for(key: bytes, *, after_step: int = -1) -> str:
    """The current 30-second code, or the first one after ``after_step`` (a code is taken
    once: a second login within the same 30 s needs the next one)."""
    totp = TOTP(key)
    now_step = int(time.time()) // 30
    totp.time = max(now_step, after_step + 1) * 30
    return f"{totp.token():06d}"


def give_code(page, username: str) -> None:  # noqa: ANN001  (a playwright Page)
    """On the two-step login page: type the right code, enrolling first if asked."""
    shown = page.locator("#totp-secret")
    if shown.count():
        secret = shown.inner_text().replace(" ", "")
        code = code_for(base64.b32decode(secret + "=" * (-len(secret) % 8)))
    else:
        device = TOTPDevice.objects.get(user__username=username, confirmed=True)
        code = code_for(device.bin_key, after_step=device.last_t)
    page.fill("#id_code", code)
    page.click("input[type=submit]")
    page.wait_for_selector("#content")
