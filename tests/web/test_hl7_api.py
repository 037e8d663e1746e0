"""HL7 destinations and the message log through the API: admins only, snake_case JSON, the
address rules as 422 on ``host``, If-Match on PATCH (428 without, 412 when stale), every
answer in the OpenAPI document."""

from __future__ import annotations

import pytest
from django.test import Client

from hl7v2.persistence import store

pytestmark = pytest.mark.django_db
J = "application/json"
PROBLEM = "application/problem+json"
BASE = "/api/v1/hl7/destinations"
NEW = {"name": "Main engine", "host": "127.0.0.1", "port": 2575,
       "events": ["AdmissionStarted", "PatientRegistered"]}


@pytest.fixture
def admin_api(api_client, monkeypatch) -> Client:
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    return api_client("admin")


def create(client: Client, **changes) -> dict:
    r = client.post(BASE, {**NEW, **changes}, content_type=J)
    assert r.status_code == 201, r.content
    assert r["Location"] == f"{BASE}/{r.json()['id']}"
    return r.json() | {"_etag": r["ETag"]}


def test_it_creates_lists_reads_changes_and_deletes_a_destination(admin_api, his_store) -> None:
    made = create(admin_api)
    assert made["events"] == ["AdmissionStarted", "PatientRegistered"]
    assert made["active"] is True and made["port"] == 2575 and made["created_by"] == "api-admin"
    assert set(made) >= {"id", "name", "host", "active_since", "created_at", "etag"}
    assert [d["id"] for d in admin_api.get(BASE).json()] == [made["id"]]
    one = admin_api.get(f"{BASE}/{made['id']}")
    assert one.status_code == 200 and one["ETag"] == made["_etag"]
    r = admin_api.patch(f"{BASE}/{made['id']}", {"active": False, "name": "Lab engine"},
                        content_type=J, HTTP_IF_MATCH=one["ETag"])
    assert r.status_code == 200, r.content
    assert r.json()["active"] is False and r.json()["name"] == "Lab engine"
    assert store.get(his_store, made["id"]).active is False
    gone = admin_api.delete(f"{BASE}/{made['id']}", HTTP_IF_MATCH=r["ETag"])
    assert gone.status_code == 204
    assert admin_api.get(f"{BASE}/{made['id']}").status_code == 404
    assert admin_api.delete(f"{BASE}/{made['id']}").status_code == 404


def test_patch_needs_if_match_and_refuses_a_stale_one(admin_api, his_store) -> None:
    made = create(admin_api)
    url = f"{BASE}/{made['id']}"
    r = admin_api.patch(url, {"active": False}, content_type=J)
    assert r.status_code == 428 and r["Content-Type"] == PROBLEM
    assert r.json()["type"] == "/api/v1/problems/precondition-required"
    fresh = admin_api.patch(url, {"port": 2576}, content_type=J, HTTP_IF_MATCH=made["_etag"])
    assert fresh.status_code == 200
    stale = admin_api.patch(url, {"port": 2577}, content_type=J, HTTP_IF_MATCH=made["_etag"])
    assert stale.status_code == 412 and stale["ETag"] == fresh["ETag"]
    assert admin_api.delete(url, HTTP_IF_MATCH=made["_etag"]).status_code == 412
    assert store.get(his_store, made["id"]).port == 2576


@pytest.mark.parametrize(("host", "rule"), [
    ("127.0.0.1", "a loopback address (127.0.0.1)"),
    ("10.1.2.3", "a private address (10.1.2.3)"),
    ("169.254.169.254", "the cloud's metadata service"),
])
def test_an_address_messages_may_not_reach_is_a_422_naming_the_rule(
        api_client, his_store, monkeypatch, host: str, rule: str) -> None:
    monkeypatch.delenv("HL7_ALLOWED_NETWORKS", raising=False)
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS", raising=False)
    r = api_client("admin").post(BASE, {**NEW, "host": host}, content_type=J)
    assert r.status_code == 422 and r["Content-Type"] == PROBLEM
    [error] = r.json()["errors"]
    assert error["field"] == "host" and rule in error["message"], error
    assert "HL7_ALLOWED_NETWORKS" in error["message"]
    assert store.all_destinations(his_store) == []


@pytest.mark.parametrize(("changes", "field"), [
    ({"port": 0}, "port"),
    ({"events": ["OrderReady"]}, "events"),
    ({"events": []}, "events"),
    ({"name": "x" * 101}, "name"),
    ({"host": "engine.local/x"}, "host"),
    ({"colour": "red"}, "colour"),  # request bodies are strict
])
def test_it_refuses_bad_input_with_a_problem_on_the_field(
        admin_api, his_store, changes: dict, field: str) -> None:
    r = admin_api.post(BASE, {**NEW, **changes}, content_type=J)
    assert r.status_code == 422, r.content
    assert field in {e["field"] for e in r.json()["errors"]}


def test_non_admins_are_refused(api_client, his_store) -> None:
    for role in ("clerk", "clinician", "nurse"):
        client = api_client(role)
        assert client.get(BASE).status_code == 403
        assert client.post(BASE, NEW, content_type=J).status_code == 403
        assert client.get("/api/v1/hl7/messages").status_code == 403
        assert client.post("/api/v1/hl7/dead-letters/replay", {},
                           content_type=J).status_code == 403


def test_the_message_log_is_searched_and_dead_letters_replayed(
        admin_api, his_store, monkeypatch) -> None:
    for cid, mrn, status in [("AAAA", "H1", "accepted"), ("BBBB", "H1", "dead"),
                             ("CCCC", "H2", "dead")]:
        store.log_attempt(his_store, store.LogEntry(
            control_id=cid, destination_id="d1", stream="P_x", seq=2,
            event_type="AdmissionStarted", trigger="A01", mrn=mrn, status=status, attempts=3,
            reason="AE" if status == "dead" else "", at=f"2026-03-01T10:00:0{len(mrn)}+00:00"))
    got = admin_api.get("/api/v1/hl7/messages?mrn=H1").json()
    assert sorted(e["control_id"] for e in got) == ["AAAA", "BBBB"]
    assert [e["control_id"] for e in admin_api.get(
        "/api/v1/hl7/messages?status=dead&mrn=H2").json()] == ["CCCC"]
    assert admin_api.get("/api/v1/hl7/messages?control_id=aaaa").json()[0]["mrn"] == "H1"
    assert admin_api.get("/api/v1/hl7/messages?status=lost").status_code == 400
    sent: list[str] = []
    monkeypatch.setattr("hl7v2.outbound.tasks.send_replay", sent.append)
    r = admin_api.post("/api/v1/hl7/dead-letters/replay", {"control_ids": ["CCCC", "AAAA"]},
                       content_type=J)
    assert r.status_code == 202 and r.json() == {"queued": 1} and sent == ["CCCC"]
    assert admin_api.post("/api/v1/hl7/dead-letters/replay", {},
                          content_type=J).json() == {"queued": 2}


def test_every_answer_is_in_the_openapi_document(admin_api) -> None:
    doc = admin_api.get("/api/v1/openapi.json").json()
    paths = doc["paths"]
    expected = {
        ("/api/v1/hl7/destinations", "post"): {"201", "403", "422"},
        ("/api/v1/hl7/destinations", "get"): {"200", "403"},
        ("/api/v1/hl7/destinations/{destination_id}", "get"): {"200", "404"},
        ("/api/v1/hl7/destinations/{destination_id}", "patch"): {"200", "412", "428", "422"},
        ("/api/v1/hl7/destinations/{destination_id}", "delete"): {"204", "404", "412"},
        ("/api/v1/hl7/messages", "get"): {"200", "422"},
        ("/api/v1/hl7/dead-letters/replay", "post"): {"202", "422"},
    }
    for (path, method), codes in expected.items():
        assert codes <= set(paths[path][method]["responses"]), (path, method)
    schemas = doc["components"]["schemas"]
    body = schemas["DestinationIn"]
    assert body["additionalProperties"] is False
    assert body["properties"]["name"]["maxLength"] == 100
    assert body["properties"]["host"]["maxLength"] == 253
    assert set(schemas["MessageOut"]["properties"]) >= {"control_id", "destination_id", "mrn"}
    params = {p["name"]: p for p in paths["/api/v1/hl7/messages"]["get"]["parameters"]}
    assert params["mrn"]["schema"]["maxLength"] == 40
