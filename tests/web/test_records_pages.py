"""The record pages' safety steps: registration shows possible duplicates before saving, the
discharge confirmation re-lists orders placed meanwhile, a stale cancel keeps its reason and
shows the order as seen beside as it is now; nothing is written until confirmed."""

from __future__ import annotations

import pytest
from django.test import Client

from patients.persistence import queries

pytestmark = pytest.mark.django_db
J = "application/json"
JOHN = {"given_name": "John", "family_name": "Smith", "birth_date": "1970-01-01", "sex": "male"}


@pytest.fixture
def web(make_user, reference_data) -> Client:
    client = Client()
    client.force_login(make_user("desk-doc", "clerk", "clinician"))
    return client


def test_registration_lists_the_possible_duplicates_before_saving(web, team, his_store) -> None:
    first = team["clerk"].post("/api/v1/patients", JOHN, content_type=J).json()
    before = his_store.count()
    shown = web.post(
        "/admin/patients/register/", {**JOHN, "given_name": "JOHN", "family_name": "Smîth"}
    )
    assert shown.status_code == 200
    assert shown.context["candidates"][0]["mrn"] == first["mrn"]
    html = shown.content.decode()
    assert f"/admin/patients/{first['id']}/" in html
    assert 'type="checkbox" name="confirm_not_duplicate"' in html
    assert his_store.count() == before
    key = shown.context["form"].data["checked_for"]
    # A tick for other names than those the duplicates were shown for does not count.
    other = web.post(
        "/admin/patients/register/",
        {
            **JOHN,
            "birth_date": "1970-01-01",
            "confirm_not_duplicate": "on",
            "checked_for": "someone|else|1970-01-01",
        },
    )
    assert other.status_code == 200 and other.context["candidates"]
    saved = web.post(
        "/admin/patients/register/", {**JOHN, "confirm_not_duplicate": "on", "checked_for": key}
    )
    assert saved.status_code == 302


def test_the_discharge_confirmation_relists_an_order_placed_meanwhile(
    web, team, admit, his_store
) -> None:
    pid = admit("Meanwhile")
    url = f"/admin/patients/{pid}/discharge/"
    page = web.get(url)
    assert page.context["cancel_orders"] == []
    form = page.context["form"].initial
    team["doc"].post(
        f"/api/v1/patients/{pid}/orders",
        {"kind": "lab", "test_code": "TROP", "urgency": "stat"},
        content_type=J,
    )
    before = his_store.count()
    again = web.post(url, {**form, "disposition": "home", "note": "Typed note"})
    assert again.status_code == 200
    assert "active orders changed" in again.content.decode()
    assert [o["description"] for o in again.context["cancel_orders"]] == ["Troponin"]
    assert again.context["form"].data["note"] == "Typed note"
    assert his_store.count() == before
    done = web.post(url, {**again.context["form"].data}, follow=True)
    assert "Discharged (Home). Cancelled: Troponin." in done.content.decode()


def test_a_stale_cancel_keeps_its_reason_and_shows_both_sides(web, team, admit, his_store) -> None:
    pid = admit("Stale")
    order = (
        team["doc"]
        .post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "CBC"}, content_type=J)
        .json()
    )
    url = f"/admin/patients/{pid}/orders/{order['order_id']}/action/"
    asked = web.post(url, {"action": "cancel", "reason": "", "etag": order["etag"]})
    form = asked.context["form"].initial
    assert form["seen_status"] == "Created"
    team["nurse"].post(
        f"/api/v1/patients/{pid}/orders/{order['order_id']}/ready", {}, content_type=J
    )
    before = his_store.count()
    stale = web.post(url, {**form, "action": "cancel", "reason": "Duplicate request"})
    assert "changed by someone else meanwhile" in stale.content.decode()
    status = next(r for r in stale.context["conflict"] if r["label"] == "Status")
    assert (status["yours"], status["now"], status["differs"]) == ("Created", "Ready", True)
    assert stale.context["form"].data["reason"] == "Duplicate request"
    assert his_store.count() == before
    done = web.post(url, {**stale.context["form"].data, "action": "cancel"})
    assert done.status_code == 302
    stored = queries.order(his_store, pid, order["order_id"])
    assert (stored["status"], stored["cancelReason"]) == ("cancelled", "Duplicate request")


def test_a_reason_typed_with_another_button_opens_the_cancel_confirmation(
    web, team, admit, his_store
) -> None:
    pid = admit("Entered")
    order = (
        team["doc"]
        .post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "CBC"}, content_type=J)
        .json()
    )
    url = f"/admin/patients/{pid}/orders/{order['order_id']}/action/"
    pressed = web.post(url, {"action": "ready", "reason": "Wrong patient", "etag": order["etag"]})
    assert pressed.status_code == 200 and pressed.context["diverted"]
    assert queries.order(his_store, pid, order["order_id"])["status"] == "created"
    ready = web.post(url, {"action": "ready", "reason": "", "etag": order["etag"]})
    assert ready.status_code == 302  # no reason typed: the button does what it says
    assert queries.order(his_store, pid, order["order_id"])["status"] == "ready"
