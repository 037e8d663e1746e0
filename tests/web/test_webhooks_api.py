"""Webhook subscriptions through the API and the admin pages: admins only, snake_case JSON,
the secret shown once and stored sealed, If-Match on PATCH (428 without, 412 when stale)."""

from __future__ import annotations

import pytest
from django.test import Client

from hisadmin.core import keys
from webhooks.persistence import deadletters, subscriptions
from webhooks.persistence.trackers import tracker_pk

pytestmark = pytest.mark.django_db
J = "application/json"
PROBLEM = "application/problem+json"
SECRET = "0123456789abcdef-long-enough"
NEW = {
    "url": "https://receiver.example/his",
    "events": ["AdmissionStarted", "OrderReady"],
    "secret": SECRET,
}


@pytest.fixture
def admin_api(api_client) -> Client:
    return api_client("admin")


@pytest.fixture
def admin_page(make_user, his_store) -> Client:
    client = Client()
    client.force_login(make_user("hook-admin", "admin"))
    return client


def create(client: Client, **changes) -> dict:
    r = client.post("/api/v1/subscriptions", {**NEW, **changes}, content_type=J)
    assert r.status_code == 201, r.content
    return r.json() | {"_etag": r["ETag"]}


def test_it_creates_a_subscription_and_shows_the_secret_once(admin_api, his_store) -> None:
    made = create(admin_api)
    assert made["secret"] == SECRET and made["active"] is True
    assert made["events"] == ["AdmissionStarted", "OrderReady"]
    assert set(made) >= {"id", "url", "active_since", "created_at", "created_by", "etag"}
    listed = admin_api.get("/api/v1/subscriptions").json()
    assert [s["id"] for s in listed] == [made["id"]]
    assert "secret" not in listed[0]
    assert "secret" not in admin_api.get(f"/api/v1/subscriptions/{made['id']}").json()
    stored = his_store.read(subscriptions.SUBSCRIPTIONS_PK, made["id"])["docContents"]
    assert SECRET not in str(stored) and stored["secretSealed"]
    assert subscriptions.secret_of(his_store, made["id"]) == SECRET
    assert stored["createdBy"]["username"] == "api-admin"  # camelCase in the store


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"url": "ftp://receiver.example/x"}, "url"),
        ({"url": "receiver.example"}, "url"),
        ({"secret": "too-short"}, "secret"),
        ({"secret": ""}, "secret"),
        ({"events": ["NoSuchEvent"]}, "events"),
        ({"events": []}, "events"),
    ],
)
def test_it_refuses_bad_input_with_a_problem(admin_api, his_store, changes, field) -> None:
    r = admin_api.post("/api/v1/subscriptions", {**NEW, **changes}, content_type=J)
    assert r.status_code == 422 and r["Content-Type"] == PROBLEM
    assert r.json()["errors"][0]["field"] == field


def test_it_refuses_malformed_bodies_without_a_5xx(admin_api, his_store) -> None:
    for body in ("{", '{"url": 5}', "[]", '{"events": "AdmissionStarted"}'):
        r = admin_api.post("/api/v1/subscriptions", body, content_type=J)
        assert 400 <= r.status_code < 500, (body, r.status_code)


@pytest.mark.parametrize("role", ["clerk", "clinician", "nurse"])
def test_only_admins_manage_subscriptions(api_client, his_store, role) -> None:
    client = api_client(role)
    assert client.get("/api/v1/subscriptions").status_code == 403
    assert client.post("/api/v1/subscriptions", NEW, content_type=J).status_code == 403
    assert client.get("/api/v1/webhooks/dead-letters").status_code == 403


def test_patch_needs_if_match_and_switches_deliveries_off(admin_api, his_store) -> None:
    made = create(admin_api)
    url = f"/api/v1/subscriptions/{made['id']}"
    r = admin_api.patch(url, {"active": False}, content_type=J)
    assert r.status_code == 428 and r["Content-Type"] == PROBLEM
    assert r.json()["type"].endswith("/precondition-required")
    r = admin_api.patch(url, {"active": False}, content_type=J, HTTP_IF_MATCH=made["_etag"])
    assert r.status_code == 200 and r.json()["active"] is False
    stale = admin_api.patch(url, {"active": True}, content_type=J, HTTP_IF_MATCH=made["_etag"])
    assert stale.status_code == 412 and stale["ETag"] == r["ETag"]
    again = admin_api.patch(url, {"active": True}, content_type=J, HTTP_IF_MATCH=r["ETag"])
    assert again.json()["active"] is True
    assert again.json()["active_since"] > made["active_since"]
    doc = his_store.read(subscriptions.SUBSCRIPTIONS_PK, made["id"])["docContents"]
    assert doc["changedBy"]["username"] == "api-admin"


def test_it_deletes_and_then_knows_nothing_of_it(admin_api, his_store) -> None:
    made = create(admin_api)
    url = f"/api/v1/subscriptions/{made['id']}"
    assert admin_api.delete(url).status_code == 204
    assert admin_api.get(url).status_code == 404
    assert admin_api.delete(url).status_code == 404
    assert (
        admin_api.patch(url, {"active": False}, content_type=J, HTTP_IF_MATCH='"x"').status_code
        == 404
    )


def test_admin_pages_add_list_switch_off_and_delete(admin_page, his_store) -> None:
    page = admin_page.get("/admin/webhooks/add/")
    assert page.status_code == 200 and "Admitted" in page.content.decode()
    bad = admin_page.post("/admin/webhooks/add/", {"url": "ftp://x", "events": ["OrderReady"]})
    assert bad.status_code == 200 and "http" in bad.content.decode()
    made = admin_page.post(
        "/admin/webhooks/add/",
        {"url": "https://receiver.example/pages", "events": ["OrderReady"], "secret": ""},
    )
    html = made.content.decode()
    assert made.status_code == 200 and "shown this once" in html
    assert "no-store" in made["Cache-Control"]
    [sub] = subscriptions.all_subscriptions(his_store)
    assert subscriptions.secret_of(his_store, sub.id) in html  # generated, shown once
    listing = admin_page.get("/admin/webhooks/").content.decode()
    assert "https://receiver.example/pages" in listing and "Order ready" in listing
    assert subscriptions.secret_of(his_store, sub.id) not in listing
    r = admin_page.post(
        "/admin/webhooks/", {"subscription": sub.id, "etag": sub.version, "do": "disable"}
    )
    assert r.status_code == 302
    assert subscriptions.get(his_store, sub.id).active is False
    stale = admin_page.post(
        "/admin/webhooks/",
        {"subscription": sub.id, "etag": sub.version, "do": "enable"},
        follow=True,
    )
    assert "changed this subscription meanwhile" in stale.content.decode()
    fresh = subscriptions.get(his_store, sub.id)
    unconfirmed = admin_page.post(
        "/admin/webhooks/", {"subscription": sub.id, "etag": fresh.version, "do": "delete"}
    )
    assert unconfirmed["Location"] == f"/admin/webhooks/{sub.id}/delete/"
    assert subscriptions.all_subscriptions(his_store) == [fresh]  # no deleting unconfirmed
    confirm = admin_page.get(f"/admin/webhooks/{sub.id}/delete/")
    assert confirm.status_code == 200
    assert "https://receiver.example/pages" in confirm.content.decode()
    assert subscriptions.all_subscriptions(his_store) == [fresh]  # asking deletes nothing
    r = admin_page.post(f"/admin/webhooks/{sub.id}/delete/", {"etag": fresh.version})
    assert r.status_code == 302 and r["Location"] == "/admin/webhooks/"
    assert subscriptions.all_subscriptions(his_store) == []
    assert admin_page.get("/admin/webhooks/dead-letters/").status_code == 200


def test_pages_are_for_admins_only(make_user, his_store) -> None:
    client = Client()
    client.force_login(make_user("hook-nurse", "nurse"))
    for url in ("/admin/webhooks/", "/admin/webhooks/add/", "/admin/webhooks/dead-letters/"):
        assert client.get(url).status_code == 403
    assert "/admin/webhooks/" not in client.get("/admin/").content.decode()


def test_the_tracker_partition_is_a_view_partition() -> None:
    assert tracker_pk("abc").startswith(keys.VIEW)


def test_dead_letters_are_listed_and_replayed(admin_api, his_store, monkeypatch) -> None:
    made = create(admin_api)
    letter = deadletters.record(
        his_store,
        subscription_id=made["id"],
        stream="P_abc",
        seq=4,
        event_type="OrderReady",
        reason="HTTP 500",
        attempts=8,
    )
    listed = admin_api.get("/api/v1/webhooks/dead-letters").json()
    assert listed == [letter.as_dict()]
    sent: list[str] = []
    monkeypatch.setattr("webhooks.api.send_replay", sent.append)
    r = admin_api.post("/api/v1/webhooks/dead-letters/replay", {"ids": ["nope"]}, content_type=J)
    assert r.status_code == 202 and r.json() == {"queued": 0}
    r = admin_api.post("/api/v1/webhooks/dead-letters/replay", {}, content_type=J)
    assert r.json() == {"queued": 1} and sent == [letter.id]


def test_unknown_properties_are_refused_not_dropped(admin_api, his_store) -> None:
    """A property the API does not know (``verify_tls``) is a 422 naming it, never a
    subscription made without what the integrator meant."""
    r = admin_api.post("/api/v1/subscriptions", {**NEW, "verify_tls": False}, content_type=J)
    assert r.status_code == 422 and r["Content-Type"] == PROBLEM
    assert [e["field"] for e in r.json()["errors"]] == ["verify_tls"]
    assert admin_api.get("/api/v1/subscriptions").json() == []
    made = create(admin_api)
    r = admin_api.patch(f"/api/v1/subscriptions/{made['id']}", {"active": False, "url": "x"},
                        content_type=J, HTTP_IF_MATCH=made["_etag"])
    assert r.status_code == 422 and [e["field"] for e in r.json()["errors"]] == ["url"]


def test_deleting_asks_first_and_a_stale_confirmation_deletes_nothing(
    admin_page, admin_api, his_store
) -> None:
    made = create(admin_api)
    listing = admin_page.get("/admin/webhooks/").content.decode()
    assert f"/admin/webhooks/{made['id']}/delete/" in listing
    page = admin_page.get(f"/admin/webhooks/{made['id']}/delete/").content.decode()
    assert "Yes, delete it" in page and "Admitted" in page and "Delivering" in page
    admin_api.patch(f"/api/v1/subscriptions/{made['id']}", {"active": False}, content_type=J,
                    HTTP_IF_MATCH=made["_etag"])
    r = admin_page.post(f"/admin/webhooks/{made['id']}/delete/", {"etag": made["etag"]},
                        follow=True)
    assert "nothing was deleted" in r.content.decode()
    assert len(subscriptions.all_subscriptions(his_store)) == 1
    assert admin_page.get("/admin/webhooks/nope/delete/").status_code == 404


@pytest.mark.parametrize(("url", "rule"), [
    ("http://127.0.0.1:8080/hook", "resolves to a loopback address (127.0.0.1)"),
    ("http://localhost/hook", "a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "the cloud's metadata service"),
    ("http://10.1.2.3/hook", "a private address (10.1.2.3)"),
    ("http://[64:ff9b::7f00:1]/hook", "NAT64 address (64:ff9b::7f00:1) that embeds a "
     "loopback address (127.0.0.1)"),
    ("http://[2002:7f00:1::1]/hook", "6to4 address"),
    ("http://[::127.0.0.1]/hook", "IPv4-compatible address"),
    ("http://[::ffff:0:7f00:1]/hook", "IPv4-translated (SIIT) address"),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", "Teredo address"),
])
def test_an_address_deliveries_may_not_reach_is_refused_at_once(
    admin_api, his_store, monkeypatch, url: str, rule: str
) -> None:
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS", raising=False)
    r = admin_api.post("/api/v1/subscriptions", {**NEW, "url": url}, content_type=J)
    assert r.status_code == 422 and r["Content-Type"] == PROBLEM
    [error] = r.json()["errors"]
    assert error["field"] == "url" and rule in error["message"], error
    assert subscriptions.all_subscriptions(his_store) == []


def test_a_named_network_is_accepted_and_checked_again_when_switched_on(
    admin_api, his_store, monkeypatch
) -> None:
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
    made = create(admin_api, url="http://127.0.0.1:8080/hook")
    url = f"/api/v1/subscriptions/{made['id']}"
    off = admin_api.patch(url, {"active": False}, content_type=J, HTTP_IF_MATCH=made["_etag"])
    assert off.status_code == 200
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS")
    r = admin_api.patch(url, {"active": True}, content_type=J, HTTP_IF_MATCH=off["ETag"])
    assert r.status_code == 422
    assert "loopback address (127.0.0.1)" in r.json()["errors"][0]["message"]
    assert subscriptions.get(his_store, made["id"]).active is False


def test_the_page_form_shows_the_refusal_on_the_url_field(admin_page, monkeypatch) -> None:
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS", raising=False)
    r = admin_page.post("/admin/webhooks/add/", {"url": "http://127.0.0.1/hook",
                                                 "events": ["OrderReady"], "secret": ""})
    assert r.status_code == 200
    assert "loopback address (127.0.0.1)" in " ".join(r.context["form"].errors["url"])
