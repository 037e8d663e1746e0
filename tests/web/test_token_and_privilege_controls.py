"""Who a token speaks for never changes, and privileges are raised by superusers only:
through the admin's token, user and group forms (as an admin who is not a superuser and as
a superuser), the ORM, ``create_api_token`` and ``set_roles``; each change is a security
event naming its actor."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import CommandError, call_command
from django.test import Client

from hisadmin.models import ApiToken, SecurityEvent, TokenChangeRefused

pytestmark = pytest.mark.django_db


@pytest.fixture
def office(make_user: Callable[..., User]) -> tuple[User, Client]:
    """An admin (the admin role) who is not a superuser, logged in."""
    user = make_user("office-admin", "admin")
    client = Client()
    client.force_login(user)
    return user, client


@pytest.fixture
def root(make_user: Callable[..., User]) -> tuple[User, Client]:
    user = make_user("root-admin")
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return user, client


def events(action: str) -> list[tuple[str, str, str]]:
    return [(e.actor, e.target, e.detail)
            for e in SecurityEvent.objects.filter(action=action).order_by("pk")]


def user_form(user: User, **changes: object) -> dict[str, object]:
    """The stock user change form's fields as the page would post them, with ``changes``."""
    data: dict[str, object] = {
        "username": user.username, "first_name": user.first_name,
        "last_name": user.last_name, "email": user.email,
        "is_active": "on" if user.is_active else "",
        "date_joined_0": "2026-01-01", "date_joined_1": "08:00:00",
        "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "08:00:00",
        "groups": [g.pk for g in user.groups.all()],
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v != ""}


# ------------------------------------------------------------------------- tokens
def test_the_token_user_is_read_only_in_the_admin_and_a_post_changes_nothing(
        office, make_user) -> None:
    admin_user, client = office
    token, _ = ApiToken.issue(admin_user, "own script")
    clinician = make_user("dr-victim", "clinician")
    url = f"/admin/hisadmin/apitoken/{token.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="user"' not in page and "office-admin" in page
    response = client.post(url, {"user": clinician.pk, "name": "own script"})
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.user == admin_user


def test_the_orm_refuses_a_changed_token_user_and_un_revoking(make_user) -> None:
    owner, other = make_user("token-owner", "clerk"), make_user("someone-else", "clinician")
    token, _ = ApiToken.issue(owner, "lab")
    token.user = other
    with pytest.raises(TokenChangeRefused):
        token.save()
    with pytest.raises(TokenChangeRefused):
        ApiToken.objects.filter(pk=token.pk).update(user=other)
    with pytest.raises(TokenChangeRefused):
        ApiToken.objects.bulk_update([token], ["user"])
    assert ApiToken.objects.get(pk=token.pk).user == owner
    fresh = ApiToken.objects.get(pk=token.pk)
    fresh.revoked = True
    fresh.save()
    fresh.revoked = False
    with pytest.raises(TokenChangeRefused):
        fresh.save()
    assert ApiToken.objects.get(pk=token.pk).revoked


def test_revoking_in_the_admin_is_recorded_with_the_admin_and_is_final(
        office, make_user) -> None:
    _, client = office
    token, raw = ApiToken.issue(make_user("lab-robot", "clerk"), "lab")
    url = f"/admin/hisadmin/apitoken/{token.pk}/change/"
    assert client.post(url, {"name": "lab", "revoked": "on"}).status_code == 302
    token.refresh_from_db()
    assert token.revoked
    assert events(SecurityEvent.TOKEN_REVOKED) == [
        ("office-admin", token.target(), "of lab-robot (in the admin)")]
    assert Client().get("/api/v1/openapi.json",
                        HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401
    page = client.get(url).content.decode()
    assert 'name="revoked"' not in page  # read only once revoked
    assert "token revoked" in page and "token issued" in page  # the token's events
    client.post(url, {"name": "lab"})
    token.refresh_from_db()
    assert token.revoked


def test_issuing_and_re_issuing_by_command_are_recorded_with_their_actor(
        office, make_user) -> None:
    make_user("interface-user", "clerk")
    out = io.StringIO()
    call_command("create_api_token", "interface-user", "--name", "HL7", stdout=out)
    first = ApiToken.objects.get(prefix=out.getvalue().strip()[4:12])
    out = io.StringIO()
    call_command("create_api_token", "interface-user", "--name", "HL7", "--replace",
                 "--by", "office-admin", stdout=out)
    second = ApiToken.objects.get(prefix=out.getvalue().strip()[4:12])
    first.refresh_from_db()
    assert first.revoked and not second.revoked
    assert events(SecurityEvent.TOKEN_ISSUED) == [
        ("system", first.target(), "for interface-user, named 'HL7'")]
    assert events(SecurityEvent.TOKEN_REVOKED) == [
        ("office-admin", first.target(), "of interface-user (replaced)")]
    assert events(SecurityEvent.TOKEN_REISSUED) == [
        ("office-admin", second.target(),
         f"for interface-user, named 'HL7', replacing {first.prefix}…")]
    with pytest.raises(CommandError, match="no active token"):
        call_command("create_api_token", "interface-user", "--name", "other", "--replace",
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="not an active user who may change users"):
        call_command("create_api_token", "interface-user", "--by", "interface-user",
                     stdout=io.StringIO())


def test_deactivating_a_user_records_each_token_revoked(make_user) -> None:
    user = make_user("leaver", "nurse")
    token, _ = ApiToken.issue(user, "bedside")
    call_command("deactivate_user", "leaver", stdout=io.StringIO())
    assert events(SecurityEvent.TOKEN_REVOKED) == [
        ("system", token.target(), "of leaver (user deactivated)")]


def test_admins_see_the_security_events_list_others_may_not(office, make_user) -> None:
    _, client = office
    ApiToken.issue(make_user("listed-user", "clerk"), "seen")
    page = client.get("/admin/hisadmin/securityevent/")
    assert page.status_code == 200 and "token issued" in page.content.decode()
    event = SecurityEvent.objects.get()
    assert client.post(f"/admin/hisadmin/securityevent/{event.pk}/delete/").status_code == 403
    nurse = Client()
    nurse.force_login(make_user("plain-nurse", "nurse"))
    assert nurse.get("/admin/hisadmin/securityevent/").status_code == 403


# ------------------------------------------------------------------------- privileges
def test_an_admin_who_is_not_a_superuser_cannot_raise_their_own_privileges(office) -> None:
    me, client = office
    admin_group = Group.objects.get(name="admin")
    url = f"/admin/auth/user/{me.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="is_superuser"' not in page and 'name="is_staff"' not in page
    assert 'name="user_permissions"' not in page
    perm = Permission.objects.get(codename="change_group")
    client.post(url, user_form(me, is_superuser="on", is_staff="on",
                               user_permissions=[perm.pk]))
    me.refresh_from_db()
    assert not me.is_superuser and not me.is_staff
    assert not me.user_permissions.exists()
    assert set(me.groups.values_list("name", flat=True)) == {"admin"}  # kept as it was
    assert events(SecurityEvent.PRIVILEGES_CHANGED) == []
    assert admin_group in me.groups.all()


def test_an_admin_who_is_not_a_superuser_cannot_put_anyone_in_the_admin_group(
        office, make_user) -> None:
    _, client = office
    clerk = make_user("desk-clerk", "clerk")
    admin_group, nurse = Group.objects.get(name="admin"), Group.objects.get(name="nurse")
    url = f"/admin/auth/user/{clerk.pk}/change/"
    refused = client.post(url, user_form(clerk, groups=[admin_group.pk]))
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert set(clerk.groups.values_list("name", flat=True)) == {"clerk"}
    # The clinical roles are theirs to give, and the change is recorded with them.
    assert client.post(url, user_form(clerk, groups=[nurse.pk])).status_code == 302
    assert set(clerk.groups.values_list("name", flat=True)) == {"nurse"}
    assert events(SecurityEvent.ROLES_CHANGED) == [
        ("office-admin", "user desk-clerk", "groups clerk → nurse (in the admin)")]


def test_an_admin_who_is_not_a_superuser_cannot_change_a_superuser(office, root) -> None:
    _, client = office
    boss, _ = root
    assert client.post(f"/admin/auth/user/{boss.pk}/change/",
                       user_form(boss, first_name="Mallory")).status_code == 403
    assert client.post(f"/admin/auth/user/{boss.pk}/password/", {
        "password1": "a-new-long-passphrase-42", "password2": "a-new-long-passphrase-42",
    }).status_code == 403
    boss.refresh_from_db()
    assert boss.first_name == ""


def test_an_admin_who_is_not_a_superuser_cannot_change_groups(office) -> None:
    me, client = office
    admin_group = Group.objects.get(name="admin")
    perm = Permission.objects.get(codename="change_group")
    before = set(admin_group.permissions.all())
    url = f"/admin/auth/group/{admin_group.pk}/change/"
    assert client.get(url).status_code == 200  # they may look
    assert client.post(url, {"name": "admin", "permissions": [perm.pk],
                             "users": [me.pk]}).status_code == 403
    assert client.post("/admin/auth/group/add/", {"name": "shadow"}).status_code == 403
    assert set(admin_group.permissions.all()) == before
    assert not Group.objects.filter(name="shadow").exists()


def test_a_superuser_grants_privileges_and_each_change_is_recorded(root, make_user) -> None:
    _, client = root
    clerk = make_user("promoted-clerk", "clerk")
    admin_group = Group.objects.get(name="admin")
    url = f"/admin/auth/user/{clerk.pk}/change/"
    response = client.post(url, user_form(clerk, is_staff="on", is_superuser="on",
                                          groups=[admin_group.pk]))
    assert response.status_code == 302, response.content
    clerk.refresh_from_db()
    assert clerk.is_superuser and clerk.is_staff
    assert set(clerk.groups.values_list("name", flat=True)) == {"admin"}
    assert events(SecurityEvent.PRIVILEGES_CHANGED) == [
        ("root-admin", "user promoted-clerk", "none → is_staff, is_superuser")]
    assert events(SecurityEvent.ROLES_CHANGED) == [
        ("root-admin", "user promoted-clerk", "groups clerk → admin (in the admin)")]
    group_url = f"/admin/auth/group/{admin_group.pk}/change/"
    perm = Permission.objects.get(codename="change_group")
    kept = [p.pk for p in admin_group.permissions.all()]
    assert client.post(group_url, {"name": "admin", "permissions": [*kept, perm.pk]}
                       ).status_code == 302
    assert [(a, t) for a, t, _ in events(SecurityEvent.GROUP_CHANGED)] == [
        ("root-admin", "group admin")]


def test_set_roles_records_its_actor_and_gives_the_admin_role_only_for_a_superuser(
        office, root, make_user) -> None:
    make_user("ward-clerk", "clerk")
    call_command("set_roles", "ward-clerk", "clerk", "nurse", "--by", "office-admin",
                 stdout=io.StringIO())
    with pytest.raises(CommandError, match="only a superuser"):
        call_command("set_roles", "ward-clerk", "admin", "--by", "office-admin",
                     stdout=io.StringIO())
    call_command("set_roles", "ward-clerk", "admin", "--by", "root-admin", stdout=io.StringIO())
    call_command("set_roles", "ward-clerk", "--none", stdout=io.StringIO())
    assert events(SecurityEvent.ROLES_CHANGED) == [
        ("office-admin", "user ward-clerk", "roles clerk → clerk, nurse"),
        ("root-admin", "user ward-clerk", "roles clerk, nurse → admin"),
        ("system", "user ward-clerk", "roles admin → none"),
    ]
