"""The HL7 admin pages: destinations listed, added (the address rules on the host field),
switched off and on, deleted after a confirmation; the message log searched by MRN, control
id and status, in words, with dead letters sent again. Admins only."""

from __future__ import annotations

import pytest
from django.test import Client

from hisadmin.core.actor import Actor
from hl7v2.outbound import use_cases
from hl7v2.persistence import store

pytestmark = pytest.mark.django_db
ADMIN = Actor(id="1", username="admin", roles=("admin",))


@pytest.fixture
def admin_page(make_user, his_store, monkeypatch) -> Client:
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    client = Client()
    client.force_login(make_user("hl7-admin", "admin"))
    return client


def add(his_store, name: str = "Main engine") -> str:
    return use_cases.add_destination(use_cases.AddDestination(
        name=name, host="127.0.0.1", port=2575, events=["AdmissionStarted"]),
        his_store, actor=ADMIN).id


def log(his_store, cid: str, mrn: str, status: str, dest: str = "d1") -> None:
    store.log_attempt(his_store, store.LogEntry(
        control_id=cid, destination_id=dest, stream="P_x", seq=2, event_type="AdmissionStarted",
        trigger="A01", mrn=mrn, status=status, attempts=8 if status == "dead" else 1,
        reason="ACK AE" if status == "dead" else "", at="2026-03-01T10:00:00+00:00"))


def test_it_adds_a_destination_from_the_form(admin_page, his_store) -> None:
    r = admin_page.post("/admin/hl7/add/", {"name": "Rhapsody ADT", "host": "127.0.0.1",
                                            "port": "2575", "events": ["AdmissionStarted",
                                                                       "AdmissionEnded"]})
    assert r.status_code == 302 and r["Location"] == "/admin/hl7/"
    [dest] = store.all_destinations(his_store)
    assert dest.name == "Rhapsody ADT" and dest.created_by == "hl7-admin"
    page = admin_page.get("/admin/hl7/").content.decode()
    assert "Rhapsody ADT" in page and "127.0.0.1:2575" in page
    assert "Admitted (A01)" in page or "(A01)" in page
    assert "Switch off" in page


def test_the_form_shows_the_address_rule_on_the_host_field(admin_page, monkeypatch) -> None:
    monkeypatch.delenv("HL7_ALLOWED_NETWORKS")
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS", raising=False)
    r = admin_page.post("/admin/hl7/add/", {"name": "E", "host": "127.0.0.1", "port": "2575",
                                            "events": ["AdmissionStarted"]})
    assert r.status_code == 200
    assert "loopback address (127.0.0.1)" in " ".join(r.context["form"].errors["host"])


def test_it_switches_off_and_on_and_deletes_after_confirming(admin_page, his_store) -> None:
    dest_id = add(his_store)
    etag = store.get(his_store, dest_id).version
    r = admin_page.post("/admin/hl7/", {"destination": dest_id, "etag": etag, "do": "disable"},
                        follow=True)
    assert "Messages switched off." in r.content.decode()
    assert store.get(his_store, dest_id).active is False
    r = admin_page.post("/admin/hl7/", {"destination": dest_id, "etag": etag, "do": "enable"},
                        follow=True)
    assert "changed this destination meanwhile" in r.content.decode()  # the stale ETag
    confirm = admin_page.get(f"/admin/hl7/{dest_id}/delete/")
    assert confirm.status_code == 200 and "Yes, delete it" in confirm.content.decode()
    r = admin_page.post(f"/admin/hl7/{dest_id}/delete/",
                        {"etag": store.get(his_store, dest_id).version}, follow=True)
    assert "Destination deleted." in r.content.decode()
    assert store.all_destinations(his_store) == []
    assert admin_page.get("/admin/hl7/nope/delete/").status_code == 404


def test_the_message_log_is_searched_and_shows_words(admin_page, his_store,
                                                     monkeypatch) -> None:
    dest_id = add(his_store, "Lab engine")
    log(his_store, "AAAA1", "H0000001", "accepted", dest_id)
    log(his_store, "BBBB2", "H0000001", "dead", dest_id)
    log(his_store, "CCCC3", "H0000002", "retrying", "gone")
    page = admin_page.get("/admin/hl7-messages/").content.decode()
    assert "Lab engine" in page and "(deleted destination)" in page
    assert "Failed for good" in page and "Accepted" in page and "A01 · Admitted" in page
    assert "2026-03-01T10" not in page and "1 Mar" in page  # in words, hospital time
    found = admin_page.get("/admin/hl7-messages/?mrn=h0000001&status=dead").content.decode()
    assert "BBBB2" in found and "AAAA1" not in found and "CCCC3" not in found
    by_id = admin_page.get("/admin/hl7-messages/?control_id=CCCC3").content.decode()
    assert "CCCC3" in by_id and "BBBB2" not in by_id
    lost = admin_page.get("/admin/hl7-messages/?status=lost")  # a status the log has not
    assert lost.status_code == 400  # the lists' one rule: refused, not every message
    refused = lost.content.decode()
    assert "Select a valid choice" in refused and "lost" in refused  # kept in the form
    assert "BBBB2" not in refused and "it was not run" in refused
    sent: list[str] = []
    monkeypatch.setattr("hl7v2.outbound.tasks.send_replay", sent.append)
    r = admin_page.post("/admin/hl7-messages/", {"message": ["BBBB2"]}, follow=True)
    assert sent == ["BBBB2"] and "1 message(s) queued" in r.content.decode()


def test_the_pages_are_for_admins_only(client, make_user, his_store) -> None:
    client.force_login(make_user("a-nurse", "nurse"))
    for url in ("/admin/hl7/", "/admin/hl7/add/", "/admin/hl7-messages/"):
        assert client.get(url).status_code == 403, url
