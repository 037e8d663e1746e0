"""Every change an administrator can make is a security event with its actor, target and
what changed: the walk goes through every model registered in the admin and every write of
the admin API, and fails for a model or write it does not know (a new one must say which
event it makes). The events are on the security events page and printed by
``manage.py security_events``."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from hisadmin.api import api
from hisadmin.core import keys
from hisadmin.models import ApiToken, SecurityEvent
from hl7v2.persistence import store as hl7_store
from tests.web.test_token_and_privilege_controls import user_form
from webhooks.persistence import deadletters, subscriptions

pytestmark = pytest.mark.django_db
J = "application/json"
PASSWORD = "Copper-kettle-2040-thistle"
S = SecurityEvent


@pytest.fixture
def root(make_user: Callable[..., User]) -> Client:
    user = make_user("walk-root")
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def newest(**match: str) -> SecurityEvent:
    event = SecurityEvent.objects.order_by("-pk").first()
    assert event is not None, "no security event"
    for name, wanted in match.items():
        assert wanted in getattr(event, name), (name, wanted, event.action, event.target,
                                                event.detail)
    return event


def _post(client: Client, url: str, data: dict[str, Any], status: int = 302) -> None:
    r = client.post(url, data)
    assert r.status_code == status, (url, r.status_code, r.content[:2000])


def walk_users(root: Client, make_user: Callable[..., User]) -> None:
    _post(root, "/admin/auth/user/add/", {"username": "walk-new", "password1": PASSWORD,
                                          "password2": PASSWORD, "usable_password": "true"})
    newest(action=S.USER_ADDED, target="user walk-new", actor="walk-root")
    user = User.objects.get(username="walk-new")
    _post(root, f"/admin/auth/user/{user.pk}/change/",
          user_form(user, first_name="Wanda", groups=[Group.objects.get(name="nurse").pk]))
    assert S.objects.filter(action=S.USER_CHANGED, detail__contains="first_name: — → 'Wanda'"
                            ).exists()
    newest(action=S.ROLES_CHANGED, target="user walk-new", detail="none → nurse")
    _post(root, f"/admin/auth/user/{user.pk}/password/", {"password1": PASSWORD + "x",
                                                          "password2": PASSWORD + "x"})
    newest(action=S.PASSWORD_RESET, target="user walk-new", actor="walk-root")
    _post(root, f"/admin/auth/user/{user.pk}/delete/", {"post": "yes"})
    newest(action=S.USER_DELETED, target="user walk-new")


def walk_groups(root: Client, make_user: Callable[..., User]) -> None:
    _post(root, "/admin/auth/group/add/", {"name": "walkers"})
    newest(action=S.GROUP_CHANGED, target="group walkers")
    group = Group.objects.get(name="walkers")
    _post(root, f"/admin/auth/group/{group.pk}/change/", {"name": "striders"})
    newest(action=S.GROUP_CHANGED, target="group striders", detail="renamed")
    _post(root, f"/admin/auth/group/{group.pk}/delete/", {"post": "yes"})
    newest(action=S.GROUP_CHANGED, target="group striders", detail="deleted")


def walk_tokens(root: Client, make_user: Callable[..., User]) -> None:
    token, _ = ApiToken.issue(make_user("walk-lis", "clinician"), "lab system")
    _post(root, f"/admin/hisadmin/apitoken/{token.pk}/change/", {"name": "lab system 2"})
    newest(action=S.TOKEN_CHANGED, target=token.target(),
           detail="name: 'lab system' → 'lab system 2'")
    _post(root, f"/admin/hisadmin/apitoken/{token.pk}/change/", {"name": "lab system 2",
                                                                 "revoked": "on"})
    newest(action=S.TOKEN_REVOKED, target=token.target(), actor="walk-root")


def walk_security_events(root: Client, make_user: Callable[..., User]) -> None:
    """Read only, to superusers too: nothing to walk but the refusal."""
    model_admin = admin.site._registry[SecurityEvent]
    request = type("R", (), {"user": User.objects.get(username="walk-root")})()
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
    page = root.get("/admin/hisadmin/securityevent/").content.decode()
    assert "token revoked" in page and "user added" in page  # the walk so far, listed


def walk_devices(root: Client, make_user: Callable[..., User]) -> None:
    device = TOTPDevice.objects.create(user=make_user("walk-phone", "admin"), name="phone")
    _post(root, f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {"post": "yes"})
    newest(action=S.DEVICE_DELETED, target="TOTP device 'phone' of walk-phone")


def _deleted(model: Any, url: str, **fields: Any) -> Callable[[Client, Any], None]:
    def walk(root: Client, make_user: Callable[..., User]) -> None:
        row = model.objects.create(**fields)
        _post(root, f"/admin/axes/{url}/{row.pk}/delete/", {"post": "yes"})
        newest(action=S.LOGIN_RECORD_DELETED, target=fields["username"], actor="walk-root")
    return walk


AXES = {"ip_address": "10.1.2.3", "user_agent": "ward pc", "path_info": "/admin/login/"}
ADMIN_MODELS: dict[str, Callable[[Client, Any], None]] = {
    "auth.User": walk_users,
    "auth.Group": walk_groups,
    "hisadmin.ApiToken": walk_tokens,
    "otp_totp.TOTPDevice": walk_devices,
    "axes.AccessAttempt": _deleted(AccessAttempt, "accessattempt", username="walk-locked",
                                   failures_since_start=5, get_data="", post_data="", **AXES),
    "axes.AccessLog": _deleted(AccessLog, "accesslog", username="walk-logged", **AXES),
    "axes.AccessFailureLog": _deleted(AccessFailureLog, "accessfailurelog",
                                      username="walk-failed", locked_out=False, **AXES),
    "hisadmin.SecurityEvent": walk_security_events,
}


def test_every_admin_model_change_is_a_security_event(root, make_user) -> None:
    registered = {model._meta.label for model in admin.site._registry}
    assert registered == set(ADMIN_MODELS), "a model admin without its walk: " + ", ".join(
        sorted(registered ^ set(ADMIN_MODELS)))
    for label, walk in ADMIN_MODELS.items():
        before = SecurityEvent.objects.count()
        walk(root, make_user)
        assert label == "hisadmin.SecurityEvent" or SecurityEvent.objects.count() > before, label
    printed = io.StringIO()
    call_command("security_events", "--json", "--actor", "walk-root", stdout=printed)
    lines = [json.loads(line) for line in printed.getvalue().splitlines()]
    assert {e["action"] for e in lines} >= {S.USER_ADDED, S.USER_CHANGED, S.PASSWORD_RESET,
                                            S.USER_DELETED, S.GROUP_CHANGED, S.TOKEN_CHANGED,
                                            S.TOKEN_REVOKED, S.DEVICE_DELETED,
                                            S.LOGIN_RECORD_DELETED}
    assert all(e["actor"] == "walk-root" and e["target"] for e in lines)
    table = io.StringIO()
    call_command("security_events", "--target", "user walk-new", stdout=table)
    assert "walk-root  user added  user walk-new" in table.getvalue()


# ------------------------------------------------------------------ the admin API's writes
CLINICAL_WRITES = {"post /api/v1/patients", "post /api/v1/wards/{code}/beds/{bed}/clean",
                   "put /api/v1/wards/{code}/assignments"}


def admin_api_writes() -> set[str]:
    """Every write of the API that is not a clinical command on a patient or a ward."""
    schema = api.get_openapi_schema()
    return {f"{method} {path}" for path, ops in schema["paths"].items() for method in ops
            if method in ("post", "put", "patch", "delete") and "/patients/" not in path
            and f"{method} {path}" not in CLINICAL_WRITES}


def test_every_admin_api_write_is_a_security_event(api_client, his_store, monkeypatch) -> None:
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    monkeypatch.setattr("webhooks.api.send_replay", lambda letter_id: None)
    monkeypatch.setattr("hl7v2.outbound.tasks.send_replay", lambda control_id: None)
    client = api_client("admin")
    walked: set[str] = set()

    def write(method: str, route: str, url: str, body: Any = None, status: int = 200,
              **headers: str) -> Any:
        walked.add(f"{method} {route}")
        send = getattr(client, method)
        r = send(url, body, content_type=J, **headers) if body is not None else send(
            url, **headers)
        assert r.status_code == status, (method, url, r.content)
        return r

    sub = write("post", "/api/v1/subscriptions", "/api/v1/subscriptions",
                {"url": "http://127.0.0.1:9/hook", "events": ["AdmissionStarted"],
                 "secret": "0123456789abcdef-long-enough"}, 201)
    sid = sub.json()["id"]
    newest(action=S.FEED_ADDED, target=f"webhook subscription {sid[:8]}", actor="api-admin",
           detail="url: http://127.0.0.1:9/hook")
    write("patch", "/api/v1/subscriptions/{subscription_id}", f"/api/v1/subscriptions/{sid}",
          {"active": False}, HTTP_IF_MATCH=sub["ETag"])
    newest(action=S.FEED_CHANGED, detail="active: yes → no", actor="api-admin")
    deadletters.record(his_store, subscription_id=sid, stream=keys.patient("p-walk"), seq=3,
                       event_type="AdmissionStarted", reason="HTTP 500", attempts=8)
    write("post", "/api/v1/webhooks/dead-letters/replay", "/api/v1/webhooks/dead-letters/replay",
          {}, 202)
    newest(action=S.DEAD_LETTERS_REPLAYED, target="webhook subscription dead letters",
           detail="1 queued again (all)")
    write("delete", "/api/v1/subscriptions/{subscription_id}", f"/api/v1/subscriptions/{sid}",
          status=204)
    newest(action=S.FEED_DELETED, target=f"webhook subscription {sid[:8]}", detail="deleted")

    base = "/api/v1/hl7/destinations"
    dest = write("post", base, base, {"name": "Main engine", "host": "127.0.0.1", "port": 2575,
                                      "events": ["AdmissionStarted"]}, 201)
    did = dest.json()["id"]
    newest(action=S.FEED_ADDED, target=f"HL7 destination {did[:8]} (Main engine)",
           detail="host: 127.0.0.1")
    write("patch", base + "/{destination_id}", f"{base}/{did}",
          {"name": "Backup engine", "port": 2576}, HTTP_IF_MATCH=dest["ETag"])
    newest(action=S.FEED_CHANGED, target="(Backup engine)",
           detail="name: Main engine → Backup engine; port: 2575 → 2576")
    hl7_store.log_attempt(his_store, hl7_store.LogEntry(
        control_id="WALK0000000000000001", destination_id=did, stream=keys.patient("p-walk"),
        seq=1, event_type="AdmissionStarted", trigger="A01", mrn="H0000001", status="dead",
        attempts=8, reason="AE", at="2026-11-28T10:00:00+00:00"))
    write("post", "/api/v1/hl7/dead-letters/replay", "/api/v1/hl7/dead-letters/replay",
          {"control_ids": ["WALK0000000000000001"]}, 202)
    newest(action=S.DEAD_LETTERS_REPLAYED, target="HL7 destination dead letters",
           detail="(chosen): WALK0000000000000001")
    write("delete", base + "/{destination_id}", f"{base}/{did}", status=204)
    newest(action=S.FEED_DELETED, target=f"HL7 destination {did[:8]}", actor="api-admin")

    assert walked == admin_api_writes(), "an admin write without its walk: " + ", ".join(
        sorted(walked ^ admin_api_writes()))


def test_the_feed_pages_record_each_change_and_show_it(make_user, his_store, monkeypatch
                                                      ) -> None:
    """The shared receiver pages: switching off on the list and deleting after the
    confirmation are recorded with the admin; the list shows the last change and the
    confirmation the recorded changes."""
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    client = Client()
    client.force_login(make_user("feed-admin", "admin"))
    _post(client, "/admin/hl7/add/", {"name": "Ward engine", "host": "127.0.0.1",
                                      "port": "2575", "events": ["AdmissionStarted"]})
    dest = hl7_store.all_destinations(his_store)[0]
    _post(client, "/admin/webhooks/add/", {"url": "http://127.0.0.1:9/h",
                                           "events": ["AdmissionStarted"]}, 200)
    for page, field, receiver in (
            ("/admin/hl7/", "destination", dest),
            ("/admin/webhooks/", "subscription", subscriptions.all_subscriptions(his_store)[0])):
        _post(client, page, {field: receiver.id, "etag": receiver.version, "do": "disable"})
        newest(action=S.FEED_CHANGED, actor="feed-admin", target=receiver.id[:8],
               detail="active: yes → no")
        listed = client.get(page).content.decode()
        assert "Last change: active: yes → no" in listed and "by feed-admin" in listed
        confirm = client.get(f"{page}{receiver.id}/delete/").content.decode()
        assert "Recorded changes" in confirm and "active: yes → no" in confirm
        assert "Feed added" in confirm
        _post(client, f"{page}{receiver.id}/delete/", {"etag": ""})
        newest(action=S.FEED_DELETED, actor="feed-admin", target=receiver.id[:8])


def test_replaying_the_projections_dead_letters_on_their_page_is_recorded(
        make_user, his_store, monkeypatch) -> None:
    from worklists.persistence import deadletters as projection_letters

    monkeypatch.setattr("worklists.pages.deadletters.enqueue", lambda *a, **k: None)
    projection_letters.record(his_store, stream_pk=keys.patient("p-walk"), seq=2,
                              reason="KeyError", attempts=5)
    client = Client()
    client.force_login(make_user("ops-admin", "admin"))
    _post(client, "/admin/worklists/dead-letters/", {"all": "1"})
    newest(action=S.DEAD_LETTERS_REPLAYED, actor="ops-admin",
           target="worklist projection dead letters", detail="1 queued again (all)")
