"""Separation of duties: a superuser's account, devices and tokens are a superuser's to
change (403 and a ``change refused`` event otherwise); nobody gives themself a role; a
password set by someone else is a security event the user is told about at the next login,
and they choose a new one before anything else; "change password" is throttled as the
login; an admin without a clinical role reads the HL7 message log's patients only as an
audited read."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from hisadmin.models import AccessRecord, ApiToken, SecurityEvent
from testkit.fixtures import TEST_PASSWORD
from tests.web.test_token_and_privilege_controls import user_form

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "Harbour-lantern-1987-quince"


def refused() -> list[tuple[str, str]]:
    return [(e.actor, e.target) for e in
            SecurityEvent.objects.filter(action=SecurityEvent.REFUSED).order_by("pk")]


def _logged_in(user: User) -> tuple[User, Client]:
    client = Client()
    client.force_login(user)
    return user, client


@pytest.fixture
def office(make_user: Callable[..., User]) -> tuple[User, Client]:
    """An admin (the admin role) who is not a superuser, logged in."""
    return _logged_in(make_user("office-admin", "admin"))


@pytest.fixture
def root(make_user: Callable[..., User]) -> tuple[User, Client]:
    user = make_user("root-admin")
    user.is_superuser = True
    user.save()
    return _logged_in(user)


@pytest.fixture
def superuser(make_user: Callable[..., User]) -> User:
    user = make_user("chief-root")
    user.is_superuser = True
    user.save()
    return user


def test_an_admin_cannot_touch_a_superusers_device_password_account_or_token(
        office, root, superuser) -> None:
    _, client = office
    device = TOTPDevice.objects.create(user=superuser, name="phone", confirmed=True)
    token, _ = ApiToken.issue(superuser, "root script")
    attempts = {
        "device": f"/admin/otp_totp/totpdevice/{device.pk}/delete/",
        "password": f"/admin/auth/user/{superuser.pk}/password/",
        "account": f"/admin/auth/user/{superuser.pk}/change/",
        "token": f"/admin/hisadmin/apitoken/{token.pk}/change/",
    }
    bodies = {"device": {"post": "yes"},
              "password": {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
              "account": user_form(superuser, first_name="Mallory"),
              "token": {"name": "renamed", "revoked": "on"}}
    for what, url in attempts.items():
        assert client.post(url, bodies[what]).status_code == 403, what
    assert TOTPDevice.objects.filter(pk=device.pk).exists()
    superuser.refresh_from_db()
    assert superuser.check_password(TEST_PASSWORD) and superuser.first_name == ""
    token.refresh_from_db()
    assert (token.name, token.revoked) == ("root script", False)
    assert [actor for actor, _ in refused()] == ["office-admin"] * 4
    assert {target for _, target in refused()} == {
        "TOTP device 'phone' of chief-root", "user chief-root", "API token " + token.prefix + "…"}
    # The device list offers no delete for it either (the bulk action refuses too).
    bulk = client.post("/admin/otp_totp/totpdevice/", {
        "action": "delete_selected", "_selected_action": [device.pk], "post": "yes"})
    assert bulk.status_code == 403 and TOTPDevice.objects.filter(pk=device.pk).exists()
    # A superuser may, and it is recorded.
    _, root_client = root
    assert root_client.post(attempts["device"], {"post": "yes"}).status_code == 302
    deleted = SecurityEvent.objects.get(action=SecurityEvent.DEVICE_DELETED)
    assert (deleted.actor, deleted.target) == ("root-admin", "TOTP device 'phone' of chief-root")


def test_an_admin_may_remove_a_colleagues_lost_device_and_it_is_recorded(office, make_user
                                                                         ) -> None:
    _, client = office
    device = TOTPDevice.objects.create(user=make_user("ward-admin", "admin"), name="old phone")
    assert client.post(f"/admin/otp_totp/totpdevice/{device.pk}/delete/",
                       {"post": "yes"}).status_code == 302
    event = SecurityEvent.objects.get(action=SecurityEvent.DEVICE_DELETED)
    assert (event.actor, event.target) == ("office-admin", "TOTP device 'old phone' of ward-admin")


def test_nobody_gives_themself_a_role(office, root) -> None:
    """Not in the admin (the groups are read only on one's own account, and a forged POST
    changes nothing and is recorded), and not with ``set_roles --by`` oneself."""
    admin_user, client = office
    clinician = Group.objects.get(name="clinician")
    page = client.get(f"/admin/auth/user/{admin_user.pk}/change/").content.decode()
    assert 'name="groups"' not in page
    client.post(f"/admin/auth/user/{admin_user.pk}/change/",
                user_form(admin_user, groups=[clinician.pk, *admin_user.groups.values_list(
                    "pk", flat=True)]))
    assert not admin_user.groups.filter(name="clinician").exists()
    assert refused() == [("office-admin", "user office-admin")]
    with pytest.raises(CommandError, match="may not change their own roles"):
        call_command("set_roles", "office-admin", "admin", "clinician", "--by", "office-admin",
                     stdout=io.StringIO())
    assert not admin_user.groups.filter(name="clinician").exists()
    # Another admin gives it, recorded as ever.
    call_command("set_roles", "office-admin", "admin", "clinician", "--by", "root-admin",
                 stdout=io.StringIO())
    assert admin_user.groups.filter(name="clinician").exists()


def test_a_password_reset_is_recorded_told_at_the_next_login_and_replaced(office, make_user
                                                                         ) -> None:
    _, client = office
    nurse = make_user("rn-reset", "nurse")
    assert client.post(f"/admin/auth/user/{nurse.pk}/password/", {
        "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}).status_code == 302
    event = SecurityEvent.objects.get(action=SecurityEvent.PASSWORD_RESET)
    assert (event.actor, event.target) == ("office-admin", "user rn-reset")
    them = Client()
    assert them.post("/admin/login/", {"username": "rn-reset", "password": NEW_PASSWORD}
                     ).status_code == 302
    home = them.get("/admin/", follow=True)
    assert home.redirect_chain[-1][0] == "/admin/password_change/"
    assert "Your password was reset by office-admin" in home.content.decode()
    assert them.get("/admin/worklists/").status_code == 302  # nothing else until changed
    api = them.get("/api/v1/patients?mrn=MRN-NONE")  # nor the API or FHIR with this session
    assert api.status_code == 403 and api["Content-Type"] == "application/problem+json"
    assert api.json()["type"] == "/api/v1/problems/password-change-required"
    assert "reset by office-admin" in api.json()["detail"]
    fhir = them.get("/fhir/R4/Patient?family=Test")
    assert fhir.status_code == 403 and fhir.json()["resourceType"] == "OperationOutcome"
    done = them.post("/admin/password_change/", {
        "old_password": NEW_PASSWORD, "new_password1": "Quiet-meadow-2031-ochre",
        "new_password2": "Quiet-meadow-2031-ochre"})
    assert done.status_code == 302
    assert them.get("/admin/").status_code == 200
    assert them.get("/api/v1/patients?mrn=MRN-NONE").status_code == 200
    changed = SecurityEvent.objects.get(action=SecurityEvent.PASSWORD_CHANGED)
    assert (changed.actor, changed.target) == ("rn-reset", "user rn-reset")
    again = Client()  # the next login is a normal one
    assert again.post("/admin/login/", {"username": "rn-reset",
                                        "password": "Quiet-meadow-2031-ochre"}).status_code == 302
    assert again.get("/admin/").status_code == 200


def test_change_password_is_throttled_like_the_login(make_user, settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    make_user("rn-guess", "nurse")
    client = Client()
    client.force_login(User.objects.get(username="rn-guess"))
    wrong = {"old_password": "not-it-at-all", "new_password1": NEW_PASSWORD,
             "new_password2": NEW_PASSWORD}
    answers = [client.post("/admin/password_change/", wrong).status_code for _ in range(4)]
    assert answers[:2] == [200, 200] and answers[-1] == 429, answers
    right = {**wrong, "old_password": TEST_PASSWORD}
    locked = client.post("/admin/password_change/", right)
    assert locked.status_code == 429 and "Login locked for now" in locked.content.decode()
    assert User.objects.get(username="rn-guess").check_password(TEST_PASSWORD)


def test_an_admin_reading_the_hl7_log_by_mrn_is_an_audited_read(make_user, his_store) -> None:
    """The message log names patients: an MRN search is a view of that record, the log a
    list view, both in the admin's name."""
    from hisadmin.core import keys
    from hl7v2.persistence import store

    entry = store.LogEntry(control_id="CTRL0000000000000001", destination_id="d1",
                           stream=keys.patient("p-hl7-1"), seq=1, event_type="AdmissionStarted",
                           trigger="A01", mrn="H0000042", status="accepted", attempts=1,
                           reason="", at="2026-11-28T10:00:00+00:00")
    store.log_attempt(his_store, entry)
    api = Client()
    api.force_login(make_user("office-hl7", "admin"))
    found = api.get("/api/v1/hl7/messages", {"mrn": "H0000042"})
    assert found.status_code == 200 and [m["mrn"] for m in found.json()] == ["H0000042"]
    assert api.get("/admin/hl7-messages/", {"mrn": "H0000042"}).status_code == 200
    seen = AccessRecord.objects.filter(username="office-hl7").order_by("pk")
    assert [(r.patient_id, r.part) for r in seen] == [
        ("p-hl7-1", "HL7 message log (MRN search)")] * 2
