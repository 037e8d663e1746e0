"""Issue-level proof of the slice: API → batch → change feed → relay → Redis → Celery → view."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.roles import ensure_groups
from hisadmin.models import ApiToken
from patients import use_cases
from testkit.fixtures import TEST_PASSWORD
from tests.integration.processes import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def clerk_api(running_stack, stack_settings) -> Client:
    from hisadmin.core.store import get_store

    list(use_cases.load_reference_data(UnitOfWork(get_store()), actor=SYSTEM_ACTOR))
    ensure_groups()
    user = User.objects.create_user("clerk-it", password=TEST_PASSWORD)
    user.groups.add(Group.objects.get(name="clerk"))
    _, raw = ApiToken.issue(user, "it")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_it_lists_a_patient_admitted_through_the_api_in_the_worklist(clerk_api: Client) -> None:
    created = clerk_api.post("/api/v1/patients", {
        "given_name": "Inés", "family_name": "Ibáñez", "birth_date": "1970-02-03",
        "sex": "female"}, content_type="application/json")
    assert created.status_code == 201, created.content
    patient = created.json()
    admitted = clerk_api.post(f"/api/v1/patients/{patient['id']}/admissions", {
        "department_id": "SURG", "ward_id": "SURG-1", "bed": "S103", "reason": "Hernia repair",
    }, content_type="application/json")
    assert admitted.status_code == 201, admitted.content
    committed = time.monotonic()

    def listed() -> list:
        page = clerk_api.get("/api/v1/worklists/admitted", {"department": "SURG"}).json()
        return [r for r in page["items"] if r["patient_id"] == patient["id"]]

    rows = wait_for(listed, timeout=15, what="the patient in the Admitted worklist")
    assert rows[0]["bed"] == "S103"
    assert rows[0]["mrn"] == patient["mrn"]
    assert time.monotonic() - committed < 15

    # Name search is accent- and case-insensitive.
    found = clerk_api.get("/api/v1/worklists/admitted", {"department": "SURG", "q": "iba"}).json()
    assert [r["patient_id"] for r in found["items"]] == [patient["id"]]


def test_it_drops_a_discharged_patient_from_the_worklist(clerk_api: Client) -> None:
    pid = clerk_api.post("/api/v1/patients", {
        "given_name": "Tom", "family_name": "Hardy", "birth_date": "1977-09-15"},
        content_type="application/json").json()["id"]
    clerk_api.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-2", "reason": "Observation"},
        content_type="application/json")

    def ids() -> set[str]:
        page = clerk_api.get("/api/v1/worklists/admitted", {"department": "MED"}).json()
        return {r["patient_id"] for r in page["items"]}

    wait_for(lambda: pid in ids(), timeout=15, what="admission to show")
    assert clerk_api.post(f"/api/v1/patients/{pid}/discharge", {"disposition": "home"},
                          content_type="application/json").status_code == 200
    wait_for(lambda: pid not in ids(), timeout=15, what="discharge to show")


def _client(role: str, username: str) -> Client:
    user = User.objects.create_user(username, password=TEST_PASSWORD)
    user.groups.add(Group.objects.get(name=role))
    _, raw = ApiToken.issue(user, "it")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_it_keeps_medications_due_and_results_to_review_through_the_relay(
        clerk_api: Client) -> None:
    """Doses and results travel the same path: relay → Redis → Celery → view rows."""
    from datetime import UTC, datetime, timedelta

    doc, nurse = _client("clinician", "doc-it"), _client("nurse", "nurse-it")
    J = "application/json"
    pid = clerk_api.post("/api/v1/patients", {"given_name": "Ida", "family_name": "Dose",
                                              "birth_date": "1960-01-01"},
                         content_type=J).json()["id"]
    clerk_api.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Pneumonia"}, content_type=J)
    assert doc.post(f"/api/v1/patients/{pid}/allergies/none", {},
                    content_type=J).status_code == 200  # asked before the prescription
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    start = max(now - timedelta(minutes=10), now.replace(hour=0, minute=0))
    med = doc.post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "AMOX", "dose": "1", "unit": "g",
        "route": "PO", "frequency": "Q8H", "start_at": start.isoformat(),
        "first_dose": "now"},  # a dose time at the start: due already
        content_type=J).json()["order_id"]
    nurse.post(f"/api/v1/patients/{pid}/orders/{med}/ready", {}, content_type=J)
    lab = doc.post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "BMP"},
                   content_type=J).json()["order_id"]
    nurse.post(f"/api/v1/patients/{pid}/orders/{lab}/start", {}, content_type=J)
    done = nurse.post(f"/api/v1/patients/{pid}/orders/{lab}/complete", {"results": [
        {"analyte_code": "NA", "value": 140}, {"analyte_code": "K", "value": "6.1"},
        {"analyte_code": "CREAT", "value": 80}, {"analyte_code": "UREA", "value": 5},
        {"analyte_code": "GLU", "value": "5.0"}]},
        content_type=J)
    assert done.status_code == 200, done.content

    def due() -> list:
        items = nurse.get("/api/v1/worklists/medications-due", {"ward": "MED-1"}).json()["items"]
        return [i for i in items if i["patient_id"] == pid]

    def reviews() -> list:
        return doc.get("/api/v1/worklists/results-to-review").json()["items"]

    [dose] = wait_for(due, timeout=15, what="the dose in Medications due")
    [result] = wait_for(reviews, timeout=15, what="the result in Results to review")
    assert dose["order_id"] == med and result["order_id"] == lab and result["high"] == ["K"]
    assert nurse.post(f"/api/v1/patients/{pid}/orders/{med}/administrations", {
        "status": "given", "dose": "1", "unit": "g",
        "scheduled_for": dose["scheduled_for"]}, content_type=J).status_code == 201
    assert doc.post(f"/api/v1/patients/{pid}/orders/{lab}/acknowledge", {},
                    content_type=J).status_code == 200
    wait_for(lambda: not due(), timeout=15, what="the answered dose to leave the list")
    wait_for(lambda: not reviews(), timeout=15, what="the acknowledged result to leave")


def test_it_keeps_patients_at_risk_through_the_relay(clerk_api: Client) -> None:
    """An observation set and its escalation travel relay → Redis → Celery → view rows."""
    nurse = _client("nurse", "nurse-obs-it")
    J = "application/json"
    pid = clerk_api.post("/api/v1/patients", {"given_name": "Ola", "family_name": "Vitals",
                                              "birth_date": "1950-05-05"},
                         content_type=J).json()["id"]
    clerk_api.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "reason": "Sepsis"}, content_type=J)
    recorded = nurse.post(f"/api/v1/patients/{pid}/observations", {
        "respiration_rate": 26, "spo2": 91, "on_oxygen": True, "oxygen_device": "nasal",
        "oxygen_flow_l_min": "2", "systolic_bp": 98, "diastolic_bp": 55, "pulse": 124,
        "consciousness": "A", "temperature": "38,9"}, content_type=J)
    assert recorded.status_code == 201, recorded.content
    oid = recorded.json()["observation_id"]

    def at_risk() -> list:
        items = nurse.get("/api/v1/worklists/at-risk", {"department": "MED"}).json()["items"]
        return [i for i in items if i["patient_id"] == pid]

    [row] = wait_for(at_risk, timeout=15, what="the patient in Patients at risk")
    assert row["risk"] == "high" and row["escalated"] is False
    assert nurse.post(f"/api/v1/patients/{pid}/observations/{oid}/escalations", {
        "told_whom": "Outreach", "response": "critical-care"}, content_type=J).status_code == 201
    wait_for(lambda: [r for r in at_risk() if r["escalated"]], timeout=15,
             what="the escalation on Patients at risk")


def test_it_keeps_my_patients_from_the_ward_and_patient_streams_through_the_relay(
        clerk_api: Client) -> None:
    """A ward's nurses by bed (its own stream) and a patient's allergies travel relay →
    Redis → Celery into My patients, which then reads nothing else."""
    J = "application/json"
    charge = _client("charge_nurse", "charge-it")
    nurse = _client("nurse", "nurse-mine-it")
    pid = clerk_api.post("/api/v1/patients", {"given_name": "Åsa", "family_name": "Bedfellow",
                                              "birth_date": "1944-04-04"},
                         content_type=J).json()["id"]
    assert clerk_api.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-2", "bed": "M201", "reason": "Fall"},
        content_type=J).status_code == 201
    assert nurse.post(f"/api/v1/patients/{pid}/allergies", {
        "substance": "Plasters (zinc oxide)", "severity": "moderate"},
        content_type=J).status_code == 200
    sheet = charge.get("/api/v1/wards/MED-2/assignments")
    assert charge.put("/api/v1/wards/MED-2/assignments", {"assignments": [
        {"bed": "M201", "nurse": "nurse-mine-it"}]}, content_type=J,
        headers={"If-Match": sheet["ETag"]}).status_code == 200

    def mine() -> list:
        return nurse.get("/api/v1/worklists/my-patients").json()["items"]

    [row] = wait_for(lambda: [r for r in mine() if r["allergy_names"]], timeout=15,
                     what="the nurse's bed with its allergy named in My patients")
    assert (row["patient_id"], row["bed"], row["allergy_names"]) == (
        pid, "M201", ["Plasters (zinc oxide)"])
    sheet = charge.get("/api/v1/wards/MED-2/assignments")
    assert charge.put("/api/v1/wards/MED-2/assignments", {"assignments": []}, content_type=J,
                      headers={"If-Match": sheet["ETag"]}).status_code == 200
    wait_for(lambda: not mine(), timeout=15, what="the bed to leave her list")


def test_a_read_with_the_commands_consistency_token_always_sees_the_write(
        clerk_api: Client) -> None:
    """Through the real relay and worker: no waiting loop in the client, the token does it."""
    for i in range(5):
        created = clerk_api.post("/api/v1/patients", {
            "given_name": "Rye", "family_name": f"Writes{i}", "birth_date": "1990-01-01"},
            content_type="application/json")
        token = created["X-Consistency-Token"]
        found = clerk_api.get("/api/v1/worklists/patients", {"q": f"Writes{i}"},
                              HTTP_X_CONSISTENCY_TOKEN=token)
        assert found.status_code == 200, found.content
        assert [r["patient_id"] for r in found.json()["items"]] == [created.json()["id"]]
