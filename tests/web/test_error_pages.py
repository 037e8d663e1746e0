"""Error pages in the admin look with the way back; role groups as the roles table says; home
pages and section indexes per role; assets and the security policy of a site that works
offline."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.test import Client, RequestFactory
from django.urls import path

from hisadmin import errors
from hisadmin import urls as site_urls
from hisadmin.core.roles import GROUP_PERMISSIONS, Role, ensure_groups

pytestmark = pytest.mark.django_db
SIDEBAR = 'id="nav-sidebar"'


@pytest.fixture
def web(make_user: Callable[..., User], reference_data: None) -> Callable[..., Client]:
    """``web("nurse")`` → a browser-like client logged in as a user with that role."""

    def login(*roles: str) -> Client:
        client = Client(raise_request_exception=False)
        client.force_login(make_user("web-" + ("-".join(roles) or "nobody"), *roles))
        return client

    return login


def _in_admin_look(html: str) -> None:
    assert "Hospital back office" in html  # the header
    assert SIDEBAR in html  # the menu
    assert 'href="/admin/"' in html  # the way home


def test_it_shows_a_403_in_the_admin_look_to_a_nurse_discharging(
    web: Callable[..., Client], admit: Callable[..., str]
) -> None:
    pid = admit("Nodischarge")
    response = web("nurse").post(f"/admin/patients/{pid}/discharge/", {"disposition": "home"})
    assert response.status_code == 403
    html = response.content.decode()
    _in_admin_look(html)
    assert "Not allowed" in html and "This needs the clerk role." in html


def test_it_shows_a_404_in_the_admin_look_for_an_unknown_patient(
    web: Callable[..., Client],
) -> None:
    response = web("clerk").get("/admin/patients/no-such-patient/")
    assert response.status_code == 404
    html = response.content.decode()
    _in_admin_look(html)
    assert "Page not found" in html
    assert 'href="/admin/patients/find/"' in html  # finding a patient is one click away


def test_it_shows_a_400_in_the_admin_look_for_a_malformed_page_token(
    web: Callable[..., Client],
) -> None:
    response = web("clerk").get("/admin/worklists/admitted/?page=not-a-token")
    assert response.status_code == 400
    html = response.content.decode()
    _in_admin_look(html)
    assert "Bad request" in html and "Open the page again from the menu" in html


def test_it_explains_an_expired_form_in_the_admin_look(
    make_user: Callable[..., User], admit: Callable[..., str]
) -> None:
    pid = admit("Expired")
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(make_user("late", "clerk"))
    response = client.post(f"/admin/patients/{pid}/discharge/", {"disposition": "home"})
    assert response.status_code == 403
    html = response.content.decode()
    _in_admin_look(html)
    assert "This form had expired, so nothing was saved." in html


def test_it_answers_404_for_an_unknown_admin_address(web: Callable[..., Client]) -> None:
    response = web("nurse").get("/admin/no/such/page/")
    assert response.status_code == 404
    _in_admin_look(response.content.decode())


def test_it_offers_a_login_on_errors_of_anonymous_visitors(client: Client) -> None:
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert 'href="/admin/login/"' in response.content.decode()


def _boom(request: object) -> None:
    raise RuntimeError("a bug")


# This module doubles as a URLconf for the 500 test: the site's URLs plus one that crashes.
urlpatterns = [path("boom/", _boom), *site_urls.urlpatterns]
handler500 = site_urls.handler500


@pytest.mark.urls(__name__)
def test_it_answers_a_crash_with_the_500_page(web: Callable[..., Client]) -> None:
    response = web("clerk").get("/boom/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong" in html and 'href="/admin/"' in html
    assert "a bug" not in html  # nothing of the error's details


def test_it_shows_a_user_without_a_role_that_they_have_none(web: Callable[..., Client]) -> None:
    response = web().get("/admin/")
    assert response.status_code == 200
    assert "No work assigned" in response.content.decode()


def test_it_renders_the_500_page_without_the_database() -> None:
    request = RequestFactory().get("/admin/")  # no session, no user: nothing to look up
    response = errors.server_error(request)
    assert response.status_code == 500
    html = response.content.decode()
    assert "Hospital back office" in html and "Something went wrong" in html
    assert 'href="/admin/"' in html and SIDEBAR not in html


def test_it_never_shows_a_discharge_button_to_roles_that_may_not_discharge(
    web: Callable[..., Client], admit: Callable[..., str]
) -> None:
    pid = admit("Buttons")
    for role, shown in (("nurse", False), ("clinician", False), ("clerk", True)):
        html = web(role).get(f"/admin/patients/{pid}/").content.decode()
        assert ('value="Discharge' in html or 'id="discharge-link"' in html) is shown, role


def test_it_gives_each_role_group_exactly_the_permissions_of_the_roles_table(
    make_user: Callable[..., User],
) -> None:
    make_user("anyone")  # the groups exist (and are synced after every migrate)
    for role in Role:
        group = Group.objects.get(name=role.value)
        held = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        assert held == set(GROUP_PERMISSIONS[role]), role
    Group.objects.get(name="nurse").permissions.add(
        *Group.objects.get(name="admin").permissions.all()
    )
    ensure_groups()  # a permission added by hand is taken away on the next sync
    assert not Group.objects.get(name="nurse").permissions.exists()


def test_it_lets_clinical_users_in_without_making_them_staff(
    web: Callable[..., Client], make_user: Callable[..., User]
) -> None:
    for role in ("clerk", "clinician", "nurse"):
        client = web(role)
        assert client.get("/admin/").status_code == 200
        assert client.get("/admin/auth/user/").status_code == 403
        assert not User.objects.get(username=f"web-{role}").is_staff


def test_it_lets_an_admin_manage_users_and_tokens_but_not_what_roles_grant(
    web: Callable[..., Client],
) -> None:
    boss = web("admin")
    assert boss.get("/admin/auth/user/").status_code == 200
    assert boss.get("/admin/hisadmin/apitoken/").status_code == 200
    group = Group.objects.get(name="nurse")
    assert boss.get(f"/admin/auth/group/{group.pk}/change/").status_code == 200  # view only
    response = boss.post(f"/admin/auth/group/{group.pk}/change/", {"name": "nurse"})
    assert response.status_code == 403
    assert boss.get("/admin/patients/find/").status_code == 403  # not a clinical role


@pytest.mark.parametrize(
    "role,present,absent",
    [
        (
            "clerk",
            [
                "Worklists",
                "Find a patient",
                "Register a patient",
                "Internal Medicine",
                "Medical Ward 1",
            ],
            ["Reference data", "My orders"],
        ),
        (
            "clinician",
            ["Worklists", "My orders", "Active orders in Internal Medicine"],
            ["Register a patient", "Reference data"],
        ),
        (
            "nurse",
            ["Worklists", "Active orders", "Medical Ward 1"],
            ["Register a patient", "Reference data"],
        ),
        ("admin", ["Reference data", "Users"], ["Find a patient", "Medical Ward 1"]),
    ],
)
def test_it_makes_the_home_page_for_each_role(
    web: Callable[..., Client], role: str, present: list[str], absent: list[str]
) -> None:
    html = web(role).get("/admin/").content.decode()
    for text in present:
        assert text in html, (role, text)
    for text in absent:
        assert text not in html, (role, text)
    assert "Recent actions" not in html and "None available" not in html


@pytest.mark.parametrize("role", ["clerk", "clinician", "nurse", "admin"])
def test_it_lists_no_menu_section_or_entry_twice(web: Callable[..., Client], role: str) -> None:
    web(role)
    request = RequestFactory().get("/admin/")
    request.user = User.objects.get(username=f"web-{role}")
    apps = admin.site.get_app_list(request)
    names = [a["name"] for a in apps]
    assert len(names) == len(set(names)), names
    entries = [m["name"] for a in apps for m in a["models"]]
    assert len(entries) == len(set(entries)), entries
    assert not {"Find a patient", "Find patients"} <= set(entries)


def test_it_serves_the_patients_and_worklists_indexes(web: Callable[..., Client]) -> None:
    clerk = web("clerk")
    patients = clerk.get("/admin/patients/")
    assert patients.status_code == 200
    html = patients.content.decode()
    assert 'name="q"' in html and 'href="/admin/patients/register/"' in html
    worklists = clerk.get("/admin/worklists/")
    assert worklists.status_code == 200
    html = worklists.content.decode()
    assert 'href="/admin/worklists/admitted/"' in html
    assert 'href="/admin/worklists/my-orders/"' not in html  # not a clerk's worklist
    assert web("admin").get("/admin/patients/").status_code == 403


def test_it_serves_every_asset_itself_and_says_so_in_a_policy(web: Callable[..., Client]) -> None:
    clerk = web("clerk")
    for url in ("/admin/", "/api/v1/docs"):
        response = clerk.get(url)
        assert response.status_code == 200
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
        html = response.content.decode()
        assert "://" not in html.replace("http://www.w3.org", ""), url  # no other host
    docs = clerk.get("/api/v1/docs").content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in docs
    assert clerk.get("/static/ninja/swagger-ui-bundle.js").status_code == 200


def test_it_has_a_favicon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert client.get(response["Location"]).status_code == 200
