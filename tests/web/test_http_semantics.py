"""HTTP semantics on every command of ``/api/v1``: If-Match (412 when stale), Idempotency-Key
(replay, 422 on reuse), ``conflicts`` on every 409, ``Location`` on every 201, 401 with
``WWW-Authenticate`` without a token (CSRF only for sessions), ``Cache-Control: no-store``
on answers with patient data, and an OpenAPI document that says so."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.serializers.json import DjangoJSONEncoder
from django.test import Client

from hisadmin.core import keys
from hisadmin.core.idempotency import IN_PROGRESS
from hisadmin.core.models import IdempotencyRecord
from patients.tasks import follow_up
from webhooks.persistence import deadletters

pytestmark = pytest.mark.django_db
J = "application/json"
PROBLEM = "application/problem+json"
STALE = '"not-the-etag"'
MED = {"kind": "medication", "medication_code": "PARA", "dose": "1", "unit": "g",
       "route": "PO", "frequency": "Q8H",
       "first_dose": "now"}  # a dose time now: a dose given now answers it
CBC = [{"analyte_code": "HGB", "value": 120}, {"analyte_code": "WBC", "value": "7.5"},
       {"analyte_code": "PLT", "value": 450}]
HOOK = {"url": "https://receiver.example/his", "events": ["AdmissionStarted"],
        "secret": "0123456789abcdef-long-enough"}


@dataclass
class World:
    """An admitted patient (bed M104) with an allergy, a ready medication order, a placed
    imaging order and a completed lab order; a registered patient not admitted; a bed
    (M105) being cleaned; a webhook subscription with a dead letter."""

    clients: dict[str, Client]
    pid: str
    fresh: str
    aid: str
    med: str
    xray: str
    lab: str
    sid: str
    ids: dict[str, str] = field(default_factory=dict)

    def etag(self, role: str, url: str) -> str:
        r = self.clients[role].get(url)
        assert r.status_code == 200, (url, r.content)
        return r["ETag"]


def _ok(r: Any, status: int = 200) -> Any:
    assert r.status_code == status, r.content
    return r


@pytest.fixture
def world(team: dict[str, Client], admit: Callable[..., str], api_client: Callable[..., Client],
          his_store: Any) -> World:
    clerk, doc, nurse, admin = team["clerk"], team["doc"], team["nurse"], api_client("admin")
    pid = admit("Semantics", bed="M104")
    aid = _ok(doc.post(f"/api/v1/patients/{pid}/allergies",
                       {"substance": "Latex", "severity": "mild"},
                       content_type=J)).json()["allergies"][0]["allergy_id"]
    base = f"/api/v1/patients/{pid}/orders"
    med = _ok(doc.post(base, MED, content_type=J), 201).json()["order_id"]
    _ok(nurse.post(f"{base}/{med}/ready", {}, content_type=J))
    xray = _ok(doc.post(base, {"kind": "imaging", "modality": "CR", "body_part": "CHEST"},
                        content_type=J), 201).json()["order_id"]
    lab = _ok(doc.post(base, {"kind": "lab", "test_code": "CBC"}, content_type=J),
              201).json()["order_id"]
    _ok(nurse.post(f"{base}/{lab}/start", {}, content_type=J))
    _ok(nurse.post(f"{base}/{lab}/complete", {"results": CBC}, content_type=J))
    fresh = _ok(clerk.post("/api/v1/patients", {
        "given_name": "Fay", "family_name": "Fresh", "birth_date": "1980-01-01"},
        content_type=J), 201).json()["id"]
    leaving = admit("Leaving", bed="M105", birth_date="1944-04-04")
    _ok(clerk.post(f"/api/v1/patients/{leaving}/discharge", {"disposition": "home"},
                   content_type=J))
    follow_up(keys.patient(leaving),
              his_store.read(keys.patient(leaving), "stream")["docContents"]["seq"])
    sid = _ok(admin.post("/api/v1/subscriptions", HOOK, content_type=J), 201).json()["id"]
    deadletters.record(his_store, subscription_id=sid, stream="P_abc", seq=4,
                       event_type="AdmissionStarted", reason="HTTP 500", attempts=8)
    return World({**team, "admin": admin}, pid, fresh, aid, med, xray, lab, sid)


def _send(w: World, role: str, method: str, url: str, body: Any = None, **headers: str) -> Any:
    client = w.clients[role]
    if body is None:
        return getattr(client, method)(url, **headers)
    return getattr(client, method)(url, body, content_type=J, **headers)


# (role, method, url, body) per command; {pid} {fresh} {aid} {med} {xray} {lab} {sid} filled in.
COMMANDS: dict[str, tuple[str, str, str, Any]] = {
    "admit": ("clerk", "post", "/api/v1/patients/{pid}/admissions",
              {"department_id": "MED", "ward_id": "MED-1", "reason": "Again"}),
    "transfer": ("clerk", "post", "/api/v1/patients/{pid}/transfer",
                 {"ward_id": "MED-1", "bed": "M106"}),
    "discharge": ("clerk", "post", "/api/v1/patients/{pid}/discharge",
                  {"disposition": "home"}),
    "demographics": ("clerk", "put", "/api/v1/patients/{pid}",
                     {"given_name": "Ann", "family_name": "Semantics",
                      "birth_date": "1955-02-02", "sex": "female"}),
    "place_order": ("doc", "post", "/api/v1/patients/{pid}/orders",
                    {"kind": "imaging", "modality": "CR", "body_part": "ABDOMEN"}),
    "progress": ("nurse", "post", "/api/v1/patients/{pid}/orders/{xray}/ready", {}),
    "cancel": ("doc", "post", "/api/v1/patients/{pid}/orders/{xray}/cancel",
               {"reason": "duplicate"}),
    "complete": ("nurse", "post", "/api/v1/patients/{pid}/orders/{med}/complete", {}),
    "assign": ("nurse", "put", "/api/v1/patients/{pid}/orders/{xray}/assignee",
               {"assignee": None}),
    "administer": ("nurse", "post", "/api/v1/patients/{pid}/orders/{med}/administrations",
                   {"dose": "1", "unit": "g"}),
    "acknowledge": ("doc", "post", "/api/v1/patients/{pid}/orders/{lab}/acknowledge", None),
    "add_allergy": ("doc", "post", "/api/v1/patients/{pid}/allergies",
                    {"allergen_code": "PENICILLINS", "severity": "mild"}),
    "no_known_allergies": ("doc", "post", "/api/v1/patients/{fresh}/allergies/none", None),
    "remove_allergy": ("doc", "delete",
                       "/api/v1/patients/{pid}/allergies/{aid}?reason=entered-in-error", None),
    "clean_bed": ("nurse", "post", "/api/v1/wards/MED-1/beds/M105/clean", None),
    "patch_subscription": ("admin", "patch", "/api/v1/subscriptions/{sid}", {"active": False}),
    "delete_subscription": ("admin", "delete", "/api/v1/subscriptions/{sid}", None),
}
# What each command's If-Match is the ETag of (docs/integrators.md says the same).
VERSIONED_BY = {
    "admit": ("clerk", "/api/v1/patients/{pid}"),
    "transfer": ("clerk", "/api/v1/patients/{pid}/admissions/{adm}"),
    "discharge": ("clerk", "/api/v1/patients/{pid}/admissions/{adm}"),
    "demographics": ("clerk", "/api/v1/patients/{pid}"),
    "place_order": ("doc", "/api/v1/patients/{pid}"),
    "progress": ("nurse", "/api/v1/patients/{pid}/orders/{xray}"),
    "cancel": ("nurse", "/api/v1/patients/{pid}/orders/{xray}"),
    "complete": ("nurse", "/api/v1/patients/{pid}/orders/{med}"),
    "assign": ("nurse", "/api/v1/patients/{pid}/orders/{xray}"),
    "administer": ("nurse", "/api/v1/patients/{pid}/orders/{med}"),
    "acknowledge": ("doc", "/api/v1/patients/{pid}/orders/{lab}"),
    "add_allergy": ("doc", "/api/v1/patients/{pid}"),
    "no_known_allergies": ("doc", "/api/v1/patients/{fresh}"),
    "remove_allergy": ("doc", "/api/v1/patients/{pid}"),
    "patch_subscription": ("admin", "/api/v1/subscriptions/{sid}"),
    "delete_subscription": ("admin", "/api/v1/subscriptions/{sid}"),
}


def _fill(w: World, text: str) -> str:
    if "{adm}" in text:
        admissions = w.clients["clerk"].get(f"/api/v1/patients/{w.pid}/admissions").json()
        w.ids["adm"] = admissions[0]["id"]
    return text.format(pid=w.pid, fresh=w.fresh, aid=w.aid, med=w.med, xray=w.xray,
                       lab=w.lab, sid=w.sid, **w.ids)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_stale_if_match_is_a_412_and_writes_nothing(world: World, name: str) -> None:
    role, method, url, body = COMMANDS[name]
    watched = VERSIONED_BY.get(name)
    before = world.etag(watched[0], _fill(world, watched[1])) if watched else None
    r = _send(world, role, method, _fill(world, url), body, HTTP_IF_MATCH=STALE)
    assert r.status_code == 412, (name, r.content)
    assert r["Content-Type"] == PROBLEM
    assert r.json()["type"] == "/api/v1/problems/precondition-failed"
    if watched:
        assert r["ETag"] == r.json()["current_etag"] == before  # the version to read again
        assert world.etag(watched[0], _fill(world, watched[1])) == before


@pytest.mark.parametrize("name", ["admit", "place_order", "progress", "administer"])
def test_the_current_etag_in_if_match_lets_the_command_through(world: World, name: str) -> None:
    role, method, url, body = COMMANDS[name]
    if name == "admit":  # the one not yet admitted
        url, etag = url.replace("{pid}", "{fresh}"), world.etag("clerk", f"/api/v1/patients/"
                                                                 f"{world.fresh}")
    else:
        etag = world.etag(VERSIONED_BY[name][0], _fill(world, VERSIONED_BY[name][1]))
    r = _send(world, role, method, _fill(world, url), body, HTTP_IF_MATCH=etag)
    assert r.status_code in (200, 201), (name, r.content)


def test_bed_clean_takes_the_boards_etag(world: World) -> None:
    board = {b["code"]: b for b in world.clients["nurse"].get(
        "/api/v1/wards/MED-1/beds").json()}
    assert board["M105"]["state"] == "cleaning" and board["M105"]["etag"]
    r = _send(world, "nurse", "post", "/api/v1/wards/MED-1/beds/M105/clean",
              HTTP_IF_MATCH=board["M105"]["etag"])
    assert r.status_code == 200 and r.json()["state"] == "free", r.content


# (role, method, url, body, another request under the same key) per write.
WRITES: dict[str, tuple[str, str, str, Any, Any]] = {
    "register": ("clerk", "post", "/api/v1/patients",
                 {"given_name": "Ida", "family_name": "Again", "birth_date": "1970-01-01"},
                 {"given_name": "Ida", "family_name": "Other", "birth_date": "1970-01-01"}),
    "admit": ("clerk", "post", "/api/v1/patients/{fresh}/admissions",
              {"department_id": "MED", "ward_id": "MED-1", "reason": "Falls"},
              {"department_id": "MED", "ward_id": "MED-1", "reason": "Other"}),
    "transfer": ("clerk", "post", "/api/v1/patients/{pid}/transfer",
                 {"ward_id": "MED-1", "bed": "M106"}, {"ward_id": "MED-1", "bed": "M107"}),
    "discharge": ("clerk", "post", "/api/v1/patients/{pid}/discharge",
                  {"disposition": "home"}, {"disposition": "deceased"}),
    "place_order": ("doc", "post", "/api/v1/patients/{pid}/orders",
                    {"kind": "imaging", "modality": "CR", "body_part": "ABDOMEN"},
                    {"kind": "imaging", "modality": "CR", "body_part": "ABDOMEN",
                     "urgency": "stat"}),
    "progress": ("nurse", "post", "/api/v1/patients/{pid}/orders/{xray}/ready", {},
                 {"reason": "other"}),
    "cancel": ("doc", "post", "/api/v1/patients/{pid}/orders/{xray}/cancel",
               {"reason": "duplicate"}, {"reason": "other"}),
    "assign": ("nurse", "put", "/api/v1/patients/{pid}/orders/{xray}/assignee",
               {"assignee": None}, {"assignee": "api-nurse"}),
    "administer": ("nurse", "post", "/api/v1/patients/{pid}/orders/{med}/administrations",
                   {"dose": "1", "unit": "g"}, {"dose": "0.5", "unit": "g"}),
    "acknowledge": ("doc", "post", "/api/v1/patients/{pid}/orders/{lab}/acknowledge", {},
                    {"x": 1}),
    "add_allergy": ("doc", "post", "/api/v1/patients/{pid}/allergies",
                    {"allergen_code": "PENICILLINS", "severity": "mild"},
                    {"allergen_code": "PENICILLINS", "severity": "severe"}),
    "no_known_allergies": ("doc", "post", "/api/v1/patients/{fresh}/allergies/none", {},
                           {"x": 1}),
    "remove_allergy": ("doc", "delete",
                       "/api/v1/patients/{pid}/allergies/{aid}?reason=entered-in-error", None,
                       "?reason=resolved"),
    "clean_bed": ("nurse", "post", "/api/v1/wards/MED-1/beds/M105/clean", {}, {"x": 1}),
    "subscribe": ("admin", "post", "/api/v1/subscriptions", HOOK,
                  {**HOOK, "url": "https://other.example/his"}),
    "patch_subscription": ("admin", "patch", "/api/v1/subscriptions/{sid}", {"active": False},
                           {"active": True}),
    "delete_subscription": ("admin", "delete", "/api/v1/subscriptions/{sid}", None,
                            "?x=1"),
    "replay_dead_letters": ("admin", "post", "/api/v1/webhooks/dead-letters/replay", {},
                            {"ids": ["nope"]}),
}
NEEDS_IF_MATCH = {"demographics", "assign", "patch_subscription"}


def _write(w: World, name: str, body: Any, key: str) -> Any:
    role, method, url, _, _ = WRITES[name]
    url = _fill(w, url)
    headers = {"HTTP_IDEMPOTENCY_KEY": key}
    if name in NEEDS_IF_MATCH:
        headers["HTTP_IF_MATCH"] = w.etag(role, url.replace("/assignee", ""))
    if isinstance(body, str):  # another query string
        return _send(w, role, method, url.split("?")[0] + body, None, **headers)
    return _send(w, role, method, url, body, **headers)


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_retry_with_the_same_key_replays_and_another_request_is_a_422(
        world: World, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("webhooks.api.send_replay", lambda letter_id: None)
    body, other = WRITES[name][3], WRITES[name][4]
    first = _write(world, name, body, f"key-{name}")
    assert 200 <= first.status_code < 300, (name, first.content)
    again = _write(world, name, body, f"key-{name}")
    assert again["Idempotent-Replayed"] == "true"
    assert (again.status_code, again.content) == (first.status_code, first.content)
    for header in ("Location", "ETag"):
        assert again.get(header) == first.get(header), header
    reused = _write(world, name, other, f"key-{name}")
    assert reused.status_code == 422 and reused["Content-Type"] == PROBLEM, reused.content
    assert reused.json()["type"] == "/api/v1/problems/idempotency-key-reused"


USERS = {"clerk": "api-clerk", "doc": "api-clinician", "nurse": "api-nurse",
         "admin": "api-admin"}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_replay_asks_the_policy_again_after_the_role_is_taken_away(
        world: World, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first request succeeded with the role; its replay, once the role is gone, is a
    403 problem and not the record (an Idempotency-Key is no way round the policy)."""
    monkeypatch.setattr("webhooks.api.send_replay", lambda letter_id: None)
    first = _write(world, name, WRITES[name][3], f"lost-{name}")
    assert 200 <= first.status_code < 300, (name, first.content)
    User.objects.get(username=USERS[WRITES[name][0]]).groups.clear()
    again = _write(world, name, WRITES[name][3], f"lost-{name}") \
        if name not in NEEDS_IF_MATCH else _send(
            world, WRITES[name][0], WRITES[name][1], _fill(world, WRITES[name][2]),
            WRITES[name][3], HTTP_IDEMPOTENCY_KEY=f"lost-{name}", HTTP_IF_MATCH=first["ETag"])
    assert again.status_code == 403 and again["Content-Type"] == PROBLEM, (name, again.content)
    assert "Idempotent-Replayed" not in again


def test_a_retried_allergy_is_recorded_once(world: World) -> None:
    for _ in range(3):
        _write(world, "add_allergy", WRITES["add_allergy"][3], "same-allergy")
    allergies = world.clients["doc"].get(f"/api/v1/patients/{world.pid}").json()["allergies"]
    assert [a["allergen_code"] for a in allergies].count("PENICILLINS") == 1


def test_a_retried_subscription_is_made_once(world: World) -> None:
    for _ in range(2):
        _write(world, "subscribe", HOOK, "same-hook")
    assert len(world.clients["admin"].get("/api/v1/subscriptions").json()) == 2


def _conflicts(w: World) -> dict[str, Any]:
    clerk, doc, nurse = w.clients["clerk"], w.clients["doc"], w.clients["nurse"]
    pid, base = w.pid, f"/api/v1/patients/{w.pid}/orders"
    home = {"disposition": "home"}
    IdempotencyRecord.objects.create(  # as a request still running leaves it
        user=User.objects.get(username="api-clerk"), key="busy", status=IN_PROGRESS, body="",
        method_path=f"POST /api/v1/patients/{pid}/discharge",
        request_hash=hashlib.sha256(json.dumps(home, cls=DjangoJSONEncoder).encode()).hexdigest())
    return {
        "already admitted": clerk.post(f"/api/v1/patients/{pid}/admissions", {
            "department_id": "MED", "ward_id": "MED-1", "reason": "x"}, content_type=J),
        "not admitted": clerk.post(f"/api/v1/patients/{w.fresh}/discharge",
                                   {"disposition": "home"}, content_type=J),
        "bed occupied": clerk.post(f"/api/v1/patients/{w.fresh}/admissions", {
            "department_id": "MED", "ward_id": "MED-1", "bed": "M104", "reason": "x"},
            content_type=J),
        "transition": nurse.post(f"{base}/{w.med}/ready", {}, content_type=J),
        "duplicate order": doc.post(base, MED, content_type=J),
        "allergies recorded": doc.post(f"/api/v1/patients/{pid}/allergies/none",
                                       content_type=J),
        "not resulted": doc.post(f"{base}/{w.xray}/acknowledge", content_type=J),
        "possible duplicate": clerk.post("/api/v1/patients", {
            "given_name": "Fay", "family_name": "Fresh", "birth_date": "1980-01-01"},
            content_type=J),
        "bed not cleaning": nurse.post("/api/v1/wards/MED-1/beds/M101/clean"),
        "orders changed": clerk.post(f"/api/v1/patients/{pid}/discharge", {
            "disposition": "home", "cancel_orders": []}, content_type=J),
        "request in progress": clerk.post(f"/api/v1/patients/{pid}/discharge", home,
                                          content_type=J,
                                          HTTP_IDEMPOTENCY_KEY="busy"),
    }


def test_every_409_carries_conflicts(world: World) -> None:
    for what, r in _conflicts(world).items():
        assert r.status_code == 409, (what, r.status_code, r.content)
        assert r["Content-Type"] == PROBLEM
        assert isinstance(r.json()["conflicts"], list), what
    checked = world.clients["doc"].post(f"/api/v1/patients/{world.pid}/orders", MED,
                                        content_type=J)
    assert checked.json()["conflicts"][0]["type"] == "duplicate-order"


def test_every_201_has_a_location_that_reads_200(world: World) -> None:
    created = {
        "patient": _write(world, "register", WRITES["register"][3], "loc-1"),
        "admission": _write(world, "admit", WRITES["admit"][3], "loc-2"),
        "order": _write(world, "place_order", WRITES["place_order"][3], "loc-3"),
        "administration": _write(world, "administer", WRITES["administer"][3], "loc-4"),
        "subscription": _write(world, "subscribe", HOOK, "loc-5"),
    }
    for what, r in created.items():
        assert r.status_code == 201, (what, r.content)
        role = "admin" if what == "subscription" else "nurse"
        read = world.clients[role].get(r["Location"])
        assert read.status_code == 200, (what, r["Location"])
    admission = world.clients["nurse"].get(created["admission"]["Location"])
    assert admission.json()["id"] == created["admission"].json()["id"]
    assert admission["ETag"] == created["admission"]["ETag"]


@pytest.mark.parametrize(("method", "path"), [
    ("get", "/api/v1/patients/x"), ("post", "/api/v1/patients"),
    ("delete", "/api/v1/subscriptions/x"), ("get", "/api/v1/worklists/admitted"),
])
@pytest.mark.parametrize("authorization", [None, "Bearer his_not-a-token", "Basic eDp5"])
def test_no_valid_token_and_no_session_is_a_401_with_a_bearer_challenge(
        reference_data: None, method: str, path: str, authorization: str | None) -> None:
    client = Client(enforce_csrf_checks=True)
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    r = getattr(client, method)(path, **headers)
    assert r.status_code == 401, r.content
    assert r["WWW-Authenticate"].startswith("Bearer")
    assert r["Content-Type"] == PROBLEM and r.json()["status"] == 401


def test_a_session_write_without_the_csrf_token_is_still_a_403(
        make_user: Callable[..., User], reference_data: None) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("csrf-clerk", "clerk"))
    r = client.post("/api/v1/patients", {"given_name": "Cy", "family_name": "Surf",
                                         "birth_date": "1970-01-01"}, content_type=J)
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]
    assert client.get("/api/v1/worklists/admitted").status_code == 200  # reads need none


def test_answers_with_patient_data_are_not_stored(world: World,
                                                  make_user: Callable[..., User]) -> None:
    nurse = world.clients["nurse"]
    for url in (f"/api/v1/patients/{world.pid}", f"/api/v1/patients/{world.pid}/orders",
                "/api/v1/worklists/admitted", f"/fhir/R4/Patient/{world.pid}",
                "/api/v1/patients/nobody"):
        assert "no-store" in nurse.get(url)["Cache-Control"], url
    assert "no-store" in Client().post("/api/v1/patients")["Cache-Control"]  # a 401 too
    page = Client()
    page.force_login(make_user("no-store-nurse", "nurse"))
    assert "no-store" in page.get("/admin/")["Cache-Control"]


def test_the_openapi_document_lists_the_shared_answers_of_every_write(
        team: dict[str, Client]) -> None:
    doc = team["clerk"].get("/api/v1/openapi.json").json()
    conflict = doc["components"]["schemas"]["ConflictProblem"]
    assert "conflicts" in conflict["required"]
    for path, item in doc["paths"].items():
        for method, op in item.items():
            responses = op["responses"]
            assert "WWW-Authenticate" in responses["401"]["headers"], (method, path)
            if method == "get":
                continue
            names = {p["name"] for p in op.get("parameters", []) if p["in"] == "header"}
            assert "Idempotency-Key" in names, (method, path)
            assert {"409", "412", "422"} <= set(responses), (method, path)
            schema = responses["409"]["content"][PROBLEM]["schema"]
            ref = schema["$ref"].rsplit("/", 1)[-1]
            assert "conflicts" in doc["components"]["schemas"][ref]["required"], (method, path)
            for status, answer in responses.items():
                if status == "201":
                    assert "Location" in answer["headers"], (method, path)
    order = doc["paths"]["/api/v1/patients/{patient_id}/orders"]["post"]
    assert "If-Match" in {p["name"] for p in order["parameters"]}
