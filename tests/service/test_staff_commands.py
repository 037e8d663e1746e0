"""import_staff, set_roles and deactivate_user, through call_command on a real database."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client

from hisadmin.core.roles import ensure_groups
from hisadmin.models import ApiToken, SecurityEvent
from testkit.fixtures import TEST_PASSWORD

pytestmark = [pytest.mark.service, pytest.mark.django_db]

ROSTER = """username,full_name,email,roles
aoko,Ada Okonkwo,ada.okonkwo@hospital.example,clinician
bnurse,Ben Hale,,nurse;clerk
"""


@pytest.fixture(autouse=True)
def groups(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    ensure_groups()


def _roster(tmp_path: Path, text: str, name: str = "staff.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _roles(username: str) -> list[str]:
    return sorted(User.objects.get(username=username).groups.values_list("name", flat=True))


def _state() -> list[tuple]:
    return sorted(
        (
            u.username,
            u.first_name,
            u.last_name,
            u.email,
            u.is_active,
            tuple(sorted(u.groups.values_list("name", flat=True))),
        )
        for u in User.objects.all()
    )


def test_it_creates_then_reports_unchanged_then_updates(tmp_path, capsys) -> None:
    path = _roster(tmp_path, ROSTER)
    call_command("import_staff", path)
    assert "2 created, 0 updated, 0 unchanged" in capsys.readouterr().out
    ada = User.objects.get(username="aoko")
    assert ada.get_full_name() == "Ada Okonkwo" and ada.email == "ada.okonkwo@hospital.example"
    assert not ada.has_usable_password()
    assert _roles("aoko") == ["clinician"] and _roles("bnurse") == ["clerk", "nurse"]

    call_command("import_staff", path)
    assert "0 created, 0 updated, 2 unchanged" in capsys.readouterr().out

    changed = ROSTER.replace("nurse;clerk", "nurse").replace("Ada Okonkwo", "Ada Okonkwo-Bell")
    call_command("import_staff", _roster(tmp_path, changed, "v2.csv"))
    assert "0 created, 2 updated, 0 unchanged" in capsys.readouterr().out
    assert _roles("bnurse") == ["nurse"]
    assert User.objects.get(username="aoko").get_full_name() == "Ada Okonkwo-Bell"


def test_it_keeps_groups_that_are_not_roles_and_the_active_flag(tmp_path) -> None:
    user = User.objects.create_user("aoko", is_active=False)
    user.groups.add(Group.objects.create(name="ward-champions"))
    call_command("import_staff", _roster(tmp_path, ROSTER))
    user.refresh_from_db()
    assert _roles("aoko") == ["clinician", "ward-champions"] and not user.is_active


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("user,name\nx,y\n", "line 1: the header must be username,full_name,email,roles"),
        ("", "the file is empty"),
        (ROSTER + "cdoc,Cy Doe,,surgeon\n", "line 4, roles: unknown role 'surgeon'"),
        (ROSTER + "bad name,Cy Doe,,nurse\n", "line 4, username"),
        (ROSTER + "cdoc,Cy Doe,not-an-email,nurse\n", "line 4, email"),
        (ROSTER + "cdoc,,,nurse\n", "line 4, full_name: it is empty"),
        (ROSTER + "aoko,Ada Again,,nurse\n", "line 4, username: 'aoko' is already on line 2"),
        (ROSTER + "cdoc,Cy Doe,nurse\n", "line 4: expected 4 fields"),
    ],
)
def test_a_bad_roster_changes_nothing_and_says_where(tmp_path, text, message) -> None:
    User.objects.create_user("bnurse", first_name="Old", last_name="Name")
    before = _state()
    with pytest.raises(CommandError, match="nothing imported") as failed:
        call_command("import_staff", _roster(tmp_path, text))
    assert message in str(failed.value)
    assert _state() == before


def test_a_missing_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_staff", str(tmp_path / "nope.csv"))


def test_set_roles_replaces_the_roles_and_the_admin_shows_them(tmp_path, capsys) -> None:
    call_command("import_staff", _roster(tmp_path, ROSTER))
    call_command("set_roles", "bnurse", "nurse", "admin")
    assert "roles clerk, nurse → admin, nurse" in capsys.readouterr().out
    assert _roles("bnurse") == ["admin", "nurse"]
    call_command("set_roles", "bnurse", "admin", "nurse")
    assert "unchanged" in capsys.readouterr().out

    # The admin's user list, filtered by a role's group, lists exactly its holders.
    admin = User.objects.create_superuser("root", password=TEST_PASSWORD)
    client = Client()
    client.force_login(admin)
    nurse = Group.objects.get(name="nurse")
    page = client.get(f"/admin/auth/user/?groups__id__exact={nurse.pk}")
    assert page.status_code == 200
    assert b"bnurse" in page.content and b"aoko" not in page.content
    user = User.objects.get(username="bnurse")
    change = client.get(f"/admin/auth/user/{user.pk}/change/").content.decode()
    assert f'<option value="{nurse.pk}" selected>nurse</option>' in change


def test_set_roles_refuses_bad_input_and_changes_nothing(tmp_path) -> None:
    call_command("import_staff", _roster(tmp_path, ROSTER))
    before = _state()
    with pytest.raises(CommandError, match="unknown role 'surgeon'"):
        call_command("set_roles", "aoko", "nurse", "surgeon")
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        call_command("set_roles", "ghost", "nurse")
    with pytest.raises(CommandError, match="--none"):
        call_command("set_roles", "aoko")
    assert _state() == before
    call_command("set_roles", "aoko", "--none")
    assert _roles("aoko") == []


def test_deactivation_ends_sign_in_tokens_and_sessions(tmp_path, capsys) -> None:
    call_command("import_staff", _roster(tmp_path, ROSTER))
    user = User.objects.get(username="bnurse")
    user.set_password(TEST_PASSWORD)
    user.save()
    _, raw = ApiToken.issue(user, "tests")
    browser = Client()
    browser.force_login(user)
    assert Client(HTTP_AUTHORIZATION=f"Bearer {raw}").get("/api/v1/wards").status_code == 200

    call_command("deactivate_user", "bnurse")
    assert "bnurse: deactivated" in capsys.readouterr().out
    user.refresh_from_db()
    assert not user.is_active and _roles("bnurse") == ["clerk", "nurse"]
    assert not ApiToken.objects.filter(user=user, revoked=False).exists()
    assert browser.get("/admin/").status_code == 302  # the session is gone: to the login
    signed_in = Client().post(
        "/admin/login/", {"username": "bnurse", "password": TEST_PASSWORD}
    )
    assert signed_in.status_code == 200  # the form again, with its error: no way in

    call_command("deactivate_user", "bnurse")
    assert "already deactivated" in capsys.readouterr().out
    call_command("deactivate_user", "bnurse", "--reactivate")
    user.refresh_from_db()
    assert user.is_active
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        call_command("deactivate_user", "ghost")


def test_changes_are_attributed_to_the_admin_named(tmp_path) -> None:
    admin = User.objects.create_user("head")
    admin.groups.add(Group.objects.get(name="admin"))
    call_command("import_staff", _roster(tmp_path, ROSTER), "--by", "head")
    call_command("set_roles", "aoko", "clinician", "nurse", "--by", "head")
    entries = LogEntry.objects.filter(user=admin).order_by("pk")
    assert [e.object_repr for e in entries] == ["aoko", "bnurse", "aoko"]
    assert "roles clinician → clinician, nurse" in entries.last().change_message
    before = _state()
    with pytest.raises(CommandError, match="--by 'aoko': not an active user who may change"):
        call_command("set_roles", "bnurse", "admin", "--by", "aoko")
    assert _state() == before


@pytest.mark.parametrize(("password", "why"), [
    ("nursenurse", "too short"),
    ("123456789012345", "entirely numeric"),
    ("password123456", "too common"),
    ("ben.hale.hospital", "too similar"),
])
def test_a_weak_password_in_a_roster_names_its_row_and_imports_nothing(
    tmp_path, password: str, why: str
) -> None:
    roster = ("username,full_name,email,roles,password\n"
              f"aoko,Ada Okonkwo,,clinician,{TEST_PASSWORD}\n"
              f"ben.hale,Ben Hale,ben.hale@hospital.example,nurse,{password}\n")
    with pytest.raises(CommandError) as refused:
        call_command("import_staff", _roster(tmp_path, roster))
    message = str(refused.value)
    assert "nothing imported: line 3, password:" in message and why in message
    assert password not in message  # the error names the row, never repeats the password
    assert not User.objects.exists()


def test_a_roster_password_is_set_and_changed_only_when_it_differs(tmp_path, capsys) -> None:
    roster = "username,full_name,email,roles,password\naoko,Ada Okonkwo,,clinician,{}\n"
    call_command("import_staff", _roster(tmp_path, roster.format(TEST_PASSWORD)))
    assert User.objects.get(username="aoko").check_password(TEST_PASSWORD)
    call_command("import_staff", _roster(tmp_path, roster.format(TEST_PASSWORD)))
    assert "0 updated, 1 unchanged" in capsys.readouterr().out
    call_command("import_staff", _roster(tmp_path, roster.format("Ward-7 rounds at dawn")))
    assert "1 updated" in capsys.readouterr().out
    assert User.objects.get(username="aoko").check_password("Ward-7 rounds at dawn")
    # A password changed by the roster is someone else's doing: a reset, told at the login.
    reset = SecurityEvent.objects.get(action=SecurityEvent.PASSWORD_RESET)
    assert (reset.actor, reset.target) == ("system", "user aoko")
    assert "import_staff" in reset.detail and "Ward-7" not in reset.detail
    added = SecurityEvent.objects.get(action=SecurityEvent.USER_ADDED)
    assert added.target == "user aoko" and "created with roles clinician" in added.detail
