"""Orders, allergies, transfers and demographics through the API."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
MED = {"kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
       "route": "PO", "frequency": "Q8H",
       "first_dose": "now"}  # a dose time now: a dose given now answers it



@pytest.fixture
def admitted(admit: Callable[..., str]) -> str:
    return admit("Nord", given="Ola", birth_date="1950-01-01", bed="M101", reason="Pneumonia")


def test_it_walks_a_prescription_through_its_states(team: dict[str, Client], admitted: str) -> None:
    placed = team["doc"].post(f"/api/v1/patients/{admitted}/orders", MED, content_type=J)
    assert placed.status_code == 201, placed.content
    order = placed.json()
    assert order["description"] == "Paracetamol 1000 mg PO Q8H"
    base = f"/api/v1/patients/{admitted}/orders/{order['order_id']}"
    assert team["nurse"].post(f"{base}/ready", {}, content_type=J).json()["status"] == "ready"
    given = team["nurse"].post(f"{base}/administrations", {"dose": "1000", "unit": "mg"},
                               content_type=J)
    assert given.status_code == 201, given.content
    assert given.json()["status"] == "in_progress"
    assert given.json()["administrations"][0]["by"] == "api-nurse"
    done = team["nurse"].post(f"{base}/complete", {}, content_type=J)
    assert done.json()["status"] == "completed"
    again = team["nurse"].post(f"{base}/complete", {}, content_type=J)
    assert again.status_code == 409
    trail = [e["type"] for e in team["doc"].get(f"/api/v1/patients/{admitted}/events").json()["items"]]
    assert trail[:5] == ["OrderCompleted", "OrderStarted", "MedicationAdministered",
                         "OrderReady", "MedicationPrescribed"]


def test_it_needs_a_reason_to_cancel(team: dict[str, Client], admitted: str) -> None:
    order = team["doc"].post(f"/api/v1/patients/{admitted}/orders",
                             {"kind": "lab", "test_code": "CRP", "urgency": "stat"},
                             content_type=J).json()
    url = f"/api/v1/patients/{admitted}/orders/{order['order_id']}/cancel"
    missing = team["doc"].post(url, {"reason": " "}, content_type=J)
    assert missing.status_code == 422
    assert missing.json()["errors"][0]["field"] == "reason"
    ok = team["doc"].post(url, {"reason": "Duplicate order"}, content_type=J)
    assert ok.json()["cancel_reason"] == "Duplicate order"


def test_it_cancels_active_orders_on_discharge_each_with_an_event(
        team: dict[str, Client], admitted: str) -> None:
    for body in (MED, {"kind": "imaging", "modality": "CR", "body_part": "CHEST"}):
        assert team["doc"].post(f"/api/v1/patients/{admitted}/orders", body,
                                content_type=J).status_code == 201
    assert team["clerk"].post(f"/api/v1/patients/{admitted}/discharge", {"disposition": "home"},
                              content_type=J).status_code == 200
    orders = team["doc"].get(f"/api/v1/patients/{admitted}/orders").json()
    assert {o["status"] for o in orders} == {"cancelled"}
    trail = [e["type"] for e in team["doc"].get(f"/api/v1/patients/{admitted}/events").json()["items"]]
    assert trail[:3] == ["AdmissionEnded", "OrderCancelled", "OrderCancelled"]


def test_it_rejects_unknown_reference_data_on_the_field(team: dict[str, Client],
                                                        admitted: str, his_store) -> None:
    before = his_store.count()
    r = team["doc"].post(f"/api/v1/patients/{admitted}/orders", {**MED, "medication_code": "XX"},
                         content_type=J)
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "medication_code"
    r = team["doc"].post(f"/api/v1/patients/{admitted}/orders", {**MED, "dose": "-1"},
                         content_type=J)
    assert r.status_code == 422
    assert his_store.count() == before


def test_it_refuses_orders_without_an_admission(team: dict[str, Client]) -> None:
    pid = team["clerk"].post("/api/v1/patients", {"given_name": "A", "family_name": "B",
                                                  "birth_date": "1990-01-01"},
                             content_type=J).json()["id"]
    r = team["doc"].post(f"/api/v1/patients/{pid}/orders", MED, content_type=J)
    assert r.status_code == 409
    assert "admit the patient first" in r.json()["detail"]


def test_it_transfers_and_sends_the_old_bed_to_cleaning(team: dict[str, Client],
                                                        admitted: str) -> None:
    adm = team["clerk"].get(f"/api/v1/patients/{admitted}/admissions").json()[0]
    moved = team["clerk"].post(f"/api/v1/patients/{admitted}/transfer",
                               {"ward_id": "MED-2", "bed": "M201"}, content_type=J,
                               HTTP_IF_MATCH=adm["etag"])
    assert moved.status_code == 200, moved.content
    assert (moved.json()["ward_id"], moved.json()["bed"]) == ("MED-2", "M201")
    other = team["clerk"].post("/api/v1/patients", {"given_name": "C", "family_name": "D",
                                                    "birth_date": "1990-01-01"},
                               content_type=J).json()["id"]
    admission = {"department_id": "MED", "ward_id": "MED-1", "bed": "M101", "reason": "x"}
    r = team["clerk"].post(f"/api/v1/patients/{other}/admissions", admission, content_type=J)
    assert r.status_code == 409 and r.json()["code"] == "BedBeingCleaned"  # the bed left
    assert team["nurse"].post("/api/v1/wards/MED-1/beds/M101/clean").status_code == 200
    r = team["clerk"].post(f"/api/v1/patients/{other}/admissions", admission, content_type=J)
    assert r.status_code == 201  # cleaned: free again
    taken = team["clerk"].post(f"/api/v1/patients/{other}/transfer",
                               {"ward_id": "MED-2", "bed": "M201"}, content_type=J)
    assert taken.status_code == 409


def test_it_records_allergies_and_refuses_a_stale_demographics_edit(
        team: dict[str, Client], admitted: str) -> None:
    first = team["clerk"].get(f"/api/v1/patients/{admitted}")
    etag = first["ETag"]
    added = team["nurse"].post(f"/api/v1/patients/{admitted}/allergies",
                               {"substance": "Penicillin", "reaction": "Rash",
                                "severity": "severe"}, content_type=J)
    assert added.status_code == 200
    assert added.json()["allergies"][0]["substance"] == "Penicillin"
    stale = team["clerk"].put(f"/api/v1/patients/{admitted}",
                              {"given_name": "Ola", "family_name": "Nordmann",
                               "birth_date": "1950-01-01", "sex": "male"},
                              content_type=J, HTTP_IF_MATCH=etag)
    assert stale.status_code == 412
    assert stale["ETag"] == added["ETag"]  # the current version, to re-read or resend with
    assert stale.json()["current_etag"] == added["ETag"]
    fresh = team["clerk"].put(f"/api/v1/patients/{admitted}",
                              {"given_name": "Ola", "family_name": "Nordmann",
                               "birth_date": "1950-01-01", "sex": "male"},
                              content_type=J, HTTP_IF_MATCH=added["ETag"])
    assert fresh.status_code == 200
    assert fresh.json()["family_name"] == "Nordmann"
    assert fresh.json()["allergies"][0]["substance"] == "Penicillin"  # nothing lost


def test_it_assigns_and_unassigns(team: dict[str, Client], admitted: str, make_user) -> None:
    make_user("night-nurse", "nurse")
    order = team["doc"].post(f"/api/v1/patients/{admitted}/orders", MED, content_type=J).json()
    url = f"/api/v1/patients/{admitted}/orders/{order['order_id']}/assignee"
    r = team["nurse"].put(url, {"assignee": "night-nurse"}, content_type=J,
                          HTTP_IF_MATCH=order["etag"])
    assert r.json()["assignee_name"] == "night-nurse"
    assert team["nurse"].put(url, {"assignee": "nobody"}, content_type=J,
                             HTTP_IF_MATCH=r["ETag"]).status_code == 422
    unassigned = team["nurse"].put(url, {"assignee": None}, content_type=J,
                                   HTTP_IF_MATCH=r["ETag"])
    assert unassigned.json()["assignee_id"] is None


def test_it_names_a_clinician_as_attending_never_the_admitting_clerk(
        team: dict[str, Client], make_user, client) -> None:
    doctor = make_user("dr-house", "clinician")
    doctor.first_name, doctor.last_name = "Greg", "House"
    doctor.save()
    pids = [team["clerk"].post("/api/v1/patients", {"given_name": "A", "family_name": n,
                                                    "birth_date": "1990-01-01"},
                               content_type=J).json()["id"] for n in ("One", "Two")]
    named = team["clerk"].post(f"/api/v1/patients/{pids[0]}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "x", "attending": "dr-house"},
        content_type=J)
    assert named.json()["attending_name"] == "Greg House"
    later = team["clerk"].post(f"/api/v1/patients/{pids[1]}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "x"}, content_type=J)
    assert later.json()["attending_name"] == ""  # to be named later, not "api-clerk"
    desk = make_user("desk-2", "clerk")
    client.force_login(desk)
    form = client.get(f"/admin/patients/{pids[1]}/admit/").context["form"]
    assert (str(doctor.pk), "Greg House") in form.fields["attending"].choices
