"""Passwords meet Django's validators wherever they are set; production refuses a short
SECRET_KEY; a login's refused or unknown ``next`` goes to the home page."""

from __future__ import annotations

import pytest
from django.contrib.auth import password_validation
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from patients.demo import DEMO_USERS
from testkit.fixtures import TEST_PASSWORD
from tests.web.test_ward_security import manage

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("password", ["nursenurse", "short-1", "123456789012345",
                                      "password1234", "nurse-lindqvist"])
def test_weak_passwords_are_refused(password: str) -> None:
    user = User(username="nurse-lindqvist", first_name="Nurse", last_name="Lindqvist")
    with pytest.raises(ValidationError):
        password_validation.validate_password(password, user)


def test_the_demo_and_test_fixture_passwords_pass_the_validators() -> None:
    for username, password, _, full_name in DEMO_USERS:
        first, _, last = full_name.partition(" ")
        user = User(username=username, first_name=first, last_name=last)
        password_validation.validate_password(password, user)
    for username in ("rn", "clerk", "api-clinician-nurse", "boss"):  # testkit.fixtures's
        password_validation.validate_password(TEST_PASSWORD, User(username=username))


def test_change_password_refuses_a_weak_one(make_user) -> None:
    user = make_user("rn-changer", "nurse")
    client = Client()
    client.force_login(user)
    r = client.post("/admin/password_change/", {"old_password": TEST_PASSWORD,
                                                "new_password1": "nursenurse",
                                                "new_password2": "nursenurse"})
    assert r.status_code == 200 and "too short" in r.content.decode()
    user.refresh_from_db()
    assert user.check_password(TEST_PASSWORD)


def test_an_admin_setting_a_password_is_held_to_the_validators(make_user) -> None:
    boss = User.objects.create_superuser("boss-pw", password=TEST_PASSWORD)
    target = make_user("rn-target", "nurse")
    client = Client()
    client.force_login(boss)
    url = f"/admin/auth/user/{target.pk}/password/"
    r = client.post(url, {"password1": "12345678", "password2": "12345678",
                          "usable_password": "true"})
    assert r.status_code == 200 and "entirely numeric" in r.content.decode()
    target.refresh_from_db()
    assert target.check_password(TEST_PASSWORD)


@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/x",
                                      "/no-such-page/", "/accounts/profile/"])
def test_a_refused_or_unknown_next_goes_home(make_user, next_url: str) -> None:
    make_user("rn-next", "nurse")
    r = Client().post(f"/admin/login/?next={next_url}",
                      {"username": "rn-next", "password": TEST_PASSWORD})
    assert r.status_code == 302 and r["Location"] == "/admin/"


def test_a_page_of_this_site_as_next_is_followed(make_user) -> None:
    make_user("rn-next-ok", "nurse")
    r = Client().post("/admin/login/?next=/admin/worklists/",
                      {"username": "rn-next-ok", "password": TEST_PASSWORD})
    assert r.status_code == 302 and r["Location"] == "/admin/worklists/"


def test_production_refuses_a_short_secret_key() -> None:
    done = manage("check", HISADMIN_ENV="production", SECRET_KEY="Zq8#v!Lm2@xR5$wT9^yU1&iO4*pA7")
    assert done.returncode != 0 and "needs SECRET_KEY of 50+" in done.stderr
