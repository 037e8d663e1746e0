"""Allergies through the API: coded or free text, the allergy status, "no known allergies",
and removal with a reason that keeps the allergy in the record."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def world(api_client, reference_data) -> dict:
    clerk = api_client("clerk")
    pid = clerk.post("/api/v1/patients", {"given_name": "Ines", "family_name": "Alvarez",
                                          "birth_date": "1961-04-02", "sex": "female"},
                     content_type=J).json()["id"]
    return {"pid": pid, "clerk": clerk, "doc": api_client("clinician"),
            "nurse": api_client("nurse")}


def test_a_new_patient_reads_unknown_and_a_coded_allergy_is_checkable(world: dict) -> None:
    p = f"/api/v1/patients/{world['pid']}"
    fresh = world["clerk"].get(p).json()
    assert fresh["allergy_status"] == "unknown"
    assert fresh["allergies"] == [] and fresh["no_known_allergies"] is None
    added = world["nurse"].post(f"{p}/allergies", {
        "allergen_code": "PENICILLINS", "reaction": "Anaphylaxis", "severity": "severe",
        "criticality": "high"}, content_type=J)
    assert added.status_code == 200, added.content
    body = added.json()
    assert body["allergy_status"] == "has_allergies"
    [a] = body["allergies"]
    assert {k: a[k] for k in ("allergen_code", "substance", "checkable", "reaction", "severity",
                              "criticality", "status", "recorded_by")} == {
        "allergen_code": "PENICILLINS", "substance": "Penicillins", "checkable": True,
        "reaction": "Anaphylaxis", "severity": "severe", "criticality": "high",
        "status": "active", "recorded_by": "api-nurse"}
    free = world["nurse"].post(f"{p}/allergies", {"substance": "Grandma's soup",
                                                  "severity": "mild"}, content_type=J).json()
    soup = free["allergies"][1]
    assert (soup["allergen_code"], soup["checkable"], soup["criticality"]) == (
        None, False, "unable-to-assess")


@pytest.mark.parametrize("body, field", [
    ({"allergen_code": "NOPE", "severity": "mild"}, "allergen_code"),
    ({"severity": "mild"}, "substance"),
    ({"allergen_code": "LATEX", "substance": "Latex", "severity": "mild"}, "substance"),
    ({"allergen_code": "LATEX", "severity": "mild", "criticality": "extreme"}, "criticality"),
    ({"allergen_code": "LATEX"}, "severity"),
])
def test_it_refuses_bad_allergies_with_a_422_on_the_field(world: dict, body: dict,
                                                         field: str) -> None:
    r = world["doc"].post(f"/api/v1/patients/{world['pid']}/allergies", body, content_type=J)
    assert r.status_code == 422, r.content
    problem = r.json()
    assert field in [e["field"] for e in problem.get("errors") or []] or \
        problem.get("field") == field or field in problem["detail"], problem


def test_no_known_allergies_is_recorded_explicitly_and_ended_by_an_allergy(world: dict) -> None:
    p = f"/api/v1/patients/{world['pid']}"
    etag = world["clerk"].get(p)["ETag"]
    nka = world["nurse"].post(f"{p}/allergies/none", content_type=J, HTTP_IF_MATCH=etag)
    assert nka.status_code == 200, nka.content
    assert nka.json()["allergy_status"] == "no_known_allergies"
    assert nka.json()["no_known_allergies"]["recorded_by"] == "api-nurse"
    stale = world["nurse"].post(f"{p}/allergies/none", content_type=J, HTTP_IF_MATCH=etag)
    assert stale.status_code == 412
    added = world["doc"].post(f"{p}/allergies", {"allergen_code": "LATEX",
                                                 "severity": "moderate"}, content_type=J)
    assert added.json()["allergy_status"] == "has_allergies"
    assert added.json()["no_known_allergies"] is None
    refused = world["nurse"].post(f"{p}/allergies/none", content_type=J)
    assert refused.status_code == 409
    assert "Latex" in refused.json()["detail"]
    assert world["clerk"].get(p).json()["allergy_status"] == "has_allergies"
    events = world["clerk"].get(f"{p}/events").json()["items"]
    assert [e["type"] for e in events][:3] == ["AllergyAdded", "NoKnownAllergiesRecorded",
                                              "PatientRegistered"]


def test_removal_needs_a_reason_and_keeps_the_allergy(world: dict) -> None:
    p = f"/api/v1/patients/{world['pid']}"
    doc: Client = world["doc"]
    body = doc.post(f"{p}/allergies", {"allergen_code": "LATEX", "severity": "mild"},
                    content_type=J).json()
    aid = body["allergies"][0]["allergy_id"]
    assert doc.delete(f"{p}/allergies/{aid}").status_code == 422  # no reason
    assert doc.delete(f"{p}/allergies/{aid}?reason=forgot").status_code == 422
    other = doc.delete(f"{p}/allergies/{aid}?reason=other")
    assert other.status_code == 422 and "detail" in str(other.json())
    assert world["nurse"].delete(f"{p}/allergies/{aid}?reason=resolved").status_code == 403
    stale = doc.delete(f"{p}/allergies/{aid}?reason=resolved", HTTP_IF_MATCH='"old"')
    assert stale.status_code == 412
    gone = doc.delete(f"{p}/allergies/{aid}?reason=other&detail=Tolerated+latex+gloves",
                      HTTP_IF_MATCH=body["etag"])
    assert gone.status_code == 200, gone.content
    out = gone.json()
    assert out["allergy_status"] == "unknown"  # removing the last allergy says nothing more
    [a] = out["allergies"]
    assert (a["status"], a["removal_reason"], a["removal_detail"], a["removed_by"]) == (
        "removed", "other", "Tolerated latex gloves", "api-clinician")
    assert doc.delete(f"{p}/allergies/{aid}?reason=resolved").status_code == 404
    again = doc.post(f"{p}/allergies", {"allergen_code": "LATEX", "severity": "severe"},
                     content_type=J)
    assert again.status_code == 200  # a removed allergy can be recorded anew
    event = world["clerk"].get(f"{p}/events").json()["items"][1]
    assert event["type"] == "AllergyRemoved"
    assert event["data"] == {"allergy_id": aid, "substance": "Latex", "reason": "other",
                             "detail": "Tolerated latex gloves"}
