"""Shared ward computers: idle sessions end, logins lock after repeated failures, admins
give a one-time code, and production settings pass ``check --deploy``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.idle import LAST_ACTIVE
from testkit.fixtures import TEST_PASSWORD

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def age_session(client: Client, seconds: float) -> None:
    session = client.session
    session[LAST_ACTIVE] = time.time() - seconds
    session.save()


@pytest.fixture
def nurse(make_user: Callable[..., User]) -> Client:
    client = Client()
    client.force_login(make_user("rn-idle", "nurse"))
    client.get("/admin/")  # the first request stamps the session
    return client


# --------------------------------------------------------------------------- idle sessions
def test_an_idle_session_ends_and_the_login_leads_back(nurse: Client, settings) -> None:
    age_session(nurse, settings.IDLE_TIMEOUT_SECONDS + 5)
    r = nurse.get("/admin/worklists/admitted/?department=MED")
    assert r.status_code == 302
    assert (
        r["Location"] == "/admin/login/?next=%2Fadmin%2Fworklists%2Fadmitted%2F%3Fdepartment%3DMED"
        "&signed_out=idle"
    )
    page = nurse.get(r["Location"]).content.decode()
    assert "signed out after 15 minutes without activity" in page
    # Said by the address, not a one-time message: a second login page (the list's refresh
    # and the warning script both go there) says it too.
    assert "signed out after 15 minutes without activity" in nurse.get(r["Location"]).content.decode()
    assert "without activity" not in nurse.get("/admin/login/").content.decode()
    assert nurse.get("/admin/").status_code == 302  # the session is gone, not just paused


def test_a_timed_refresh_does_not_keep_the_session_alive(nurse: Client, settings,
                                                        reference_data: None) -> None:
    """The refresh is of a page as the ward shows it: a department the hospital has."""
    age_session(nurse, settings.IDLE_TIMEOUT_SECONDS - 60)
    before = nurse.session[LAST_ACTIVE]
    r = nurse.get(
        "/admin/worklists/admitted/?department=MED", HTTP_HX_REQUEST="true", HTTP_X_IDLE_PASSIVE="1"
    )
    assert r.status_code == 200 and nurse.session[LAST_ACTIVE] == before
    assert nurse.get("/admin/session/").json()["remaining"] <= 60  # nor does the status poll
    nurse.get("/admin/")  # a request the user made does
    assert nurse.session[LAST_ACTIVE] > before


def test_a_refresh_after_the_end_sends_the_whole_page_to_the_login(nurse: Client, settings) -> None:
    age_session(nurse, settings.IDLE_TIMEOUT_SECONDS + 1)
    r = nurse.get(
        "/admin/worklists/admitted/?department=MED",
        HTTP_HX_REQUEST="true",
        HTTP_X_IDLE_PASSIVE="1",
        HTTP_HX_CURRENT_URL="http://testserver/admin/worklists/admitted/?department=MED",
    )
    assert r.status_code == 204
    assert r["HX-Redirect"].startswith("/admin/login/?next=%2Fadmin%2Fworklists%2Fadmitted")
    assert r["HX-Redirect"].endswith("&signed_out=idle")


def test_stay_signed_in_counts_as_activity(nurse: Client, settings) -> None:
    age_session(nurse, settings.IDLE_TIMEOUT_SECONDS - 30)
    assert nurse.get("/admin/session/").json()["remaining"] <= 30
    body = nurse.post("/admin/session/").json()
    assert body["signed_in"] and body["remaining"] == settings.IDLE_TIMEOUT_SECONDS
    age_session(nurse, settings.IDLE_TIMEOUT_SECONDS + 1)
    assert nurse.get("/admin/session/").json() == {"signed_in": False, "remaining": 0}


def test_every_page_carries_the_warning_script_with_the_time_left(nurse: Client) -> None:
    page = nurse.get("/admin/").content.decode()
    assert 'name="his-idle" content="900"' in page and "hisadmin/idle.js" in page
    assert "his-idle" not in Client().get("/admin/login/").content.decode()


def test_bearer_token_requests_are_not_concerned(api_client, settings) -> None:
    settings.IDLE_TIMEOUT_SECONDS = 0
    assert api_client("clerk").get("/api/v1/reference/medications").status_code == 200


# --------------------------------------------------------------------------- lockout
def login(client: Client, username: str, password: str):  # noqa: ANN201
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


def test_five_wrong_passwords_lock_the_username_on_this_computer(make_user) -> None:
    make_user("rn-typo", "nurse")
    client = Client(REMOTE_ADDR="10.9.9.9")
    for _ in range(4):
        r = login(client, "rn-typo", "wrong")
        assert r.status_code == 200 and "correct username and password" in r.content.decode()
    r = login(client, "rn-typo", "wrong")
    assert r.status_code == 429 and "Login locked for now" in r.content.decode()
    r = login(client, "rn-typo", TEST_PASSWORD)  # even the right password
    assert r.status_code == 429 and "15 minutes" in r.content.decode()
    # Another computer, and another user on this one, can still log in.
    assert login(Client(REMOTE_ADDR="10.9.9.10"), "rn-typo", TEST_PASSWORD).status_code == 302
    make_user("rn-next", "nurse")
    assert login(client, "rn-next", TEST_PASSWORD).status_code == 302


def test_a_right_password_clears_earlier_failures(make_user) -> None:
    make_user("rn-once", "nurse")
    client = Client()
    for _ in range(4):
        login(client, "rn-once", "wrong")
    assert login(client, "rn-once", TEST_PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        assert login(client, "rn-once", "wrong").status_code == 200


# --------------------------------------------------------------------------- admin 2FA
def code(device: TOTPDevice, step: int = 0) -> str:
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + step * device.step
    return f"{totp.token():06d}"


def test_an_admin_enrols_an_app_then_gives_its_code_at_every_login(make_user) -> None:
    make_user("boss-2fa", "admin")
    client = Client()
    r = login(client, "boss-2fa", TEST_PASSWORD)
    assert r.status_code == 302 and r["Location"] == "/admin/two-factor/"
    assert client.get("/admin/").status_code == 302  # not logged in before the code
    page = client.get("/admin/two-factor/").content.decode()
    assert "Set up two-step login" in page and 'id="totp-secret"' in page
    assert "data:image/svg+xml;base64," in page
    device = TOTPDevice.objects.get(user__username="boss-2fa", confirmed=False)
    bad = client.post("/admin/two-factor/", {"code": "12345"}).content.decode()
    assert "Enter the 6 digits" in bad
    r = client.post("/admin/two-factor/", {"code": code(device)})
    assert r.status_code == 302 and r["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    device.refresh_from_db()
    assert device.confirmed

    client.logout()
    r = login(client, "boss-2fa", TEST_PASSWORD)
    assert r["Location"] == "/admin/two-factor/"
    page = client.get("/admin/two-factor/").content.decode()
    assert "totp-secret" not in page  # the secret is shown once, at enrolment
    wrong = f"{(int(code(device, 1)) + 1) % 1_000_000:06d}"
    assert "not right" in client.post("/admin/two-factor/", {"code": wrong}).content.decode()
    time.sleep(1.1)  # django-otp makes each wrong code wait longer: 1 s after the first
    device.refresh_from_db()
    r = client.post("/admin/two-factor/", {"code": code(device, 1)})  # the next step's code
    assert r.status_code == 302 and client.get("/admin/").status_code == 200


def test_other_roles_log_in_with_the_password_alone(make_user) -> None:
    make_user("doc-1f", "clinician")
    r = login(Client(), "doc-1f", TEST_PASSWORD)
    assert r.status_code == 302 and r["Location"] == "/admin/"


def test_the_code_page_needs_a_password_first_and_expires(make_user, monkeypatch) -> None:
    client = Client()
    assert client.get("/admin/two-factor/")["Location"] == "/admin/login/"
    make_user("boss-slow", "admin")
    login(client, "boss-slow", TEST_PASSWORD)
    session = client.session
    session["his_2fa_pending"]["at"] -= 301
    session.save()
    assert client.get("/admin/two-factor/")["Location"] == "/admin/login/"


def test_two_factor_can_be_turned_off_in_development(make_user, settings) -> None:
    settings.ADMIN_TWO_FACTOR = False
    make_user("boss-dev", "admin")
    assert login(Client(), "boss-dev", TEST_PASSWORD)["Location"] == "/admin/"


# --------------------------------------------------------------------------- production
def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HISADMIN_ENV", "SECRET_KEY", "DEBUG", "ADMIN_TWO_FACTOR")
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_in_production() -> None:
    done = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        HISADMIN_ENV="production",
        SECRET_KEY="k" * 20 + "Zq8#v!Lm2@xR5$wT9^yU1&iO4*pA7(sD0)fG3-hJ6+kL",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout


def test_production_refuses_to_start_without_a_secret_key() -> None:
    done = manage("check", HISADMIN_ENV="production")
    assert done.returncode != 0 and "needs SECRET_KEY" in done.stderr


def test_development_warns_in_check_deploy() -> None:
    done = manage("check", "--deploy")  # make run's settings: plain HTTP on localhost
    assert "SECURE_SSL_REDIRECT" in done.stderr + done.stdout


def test_an_admin_may_remove_a_lost_device_and_unlock_a_login(make_user) -> None:
    boss = Client()
    boss.force_login(make_user("boss-helpdesk", "admin"))
    assert boss.get("/admin/otp_totp/totpdevice/").status_code == 200
    assert boss.get("/admin/axes/accessattempt/").status_code == 200
    device = TOTPDevice.objects.create(user=make_user("rn-phone", "admin"), name="phone")
    page = boss.get(f"/admin/otp_totp/totpdevice/{device.pk}/change/").content.decode()
    assert device.key not in page  # the secret is never shown again, not even to admins
    assert boss.get(f"/admin/otp_totp/totpdevice/{device.pk}/config/").status_code == 403
    nurse = Client()
    nurse.force_login(make_user("rn-curious", "nurse"))
    assert nurse.get("/admin/otp_totp/totpdevice/").status_code == 403


def test_client_login_works_without_a_request_to_throttle(make_user) -> None:
    make_user("rn-client", "nurse")
    assert Client().login(username="rn-client", password=TEST_PASSWORD)
    assert not Client().login(username="rn-client", password="wrong")
