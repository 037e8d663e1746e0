"""Merging duplicate records through the API: If-Match (428/412), the refusals (409 naming
the conflict), the retired record's 409 with a Location to the survivor, finding either MRN,
the undo, and every answer as the OpenAPI document says."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
REASON = "Registered twice: arrived unconscious as «Unknown», named the next day"


@pytest.fixture
def pair(team, admit) -> dict:
    """One woman registered twice: by name, and as "Unknown" when she arrived unconscious
    (admitted to bed M103, no known allergies recorded)."""
    clerk = team["clerk"]
    survivor = clerk.post("/api/v1/patients", {"given_name": "Zoë", "family_name": "Ibáñez",
                                               "birth_date": "1961-02-03", "sex": "female"},
                          content_type=J).json()
    retired = admit("Unknown", given="Female", bed="M103", birth_date="1961-02-03")
    return {"survivor": survivor["id"], "retired": retired, **team}


def _merge(client, pair: dict, *, etag: str | None = "read", retired_etag: str = "",
           reason: str = REASON):
    survivor = f"/api/v1/patients/{pair['survivor']}"
    headers = {}
    if etag == "read":
        etag = client.get(survivor)["ETag"]
    if etag:
        headers["HTTP_IF_MATCH"] = etag
    retired_etag = retired_etag or client.get(f"/api/v1/patients/{pair['retired']}")["ETag"]
    return client.post(f"{survivor}/merge", {"retired_id": pair["retired"],
                                             "retired_etag": retired_etag, "reason": reason},
                       content_type=J, **headers)


def test_a_clerk_merges_and_the_retired_record_points_to_the_survivor(pair: dict) -> None:
    clerk = pair["clerk"]
    r = _merge(clerk, pair)
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["state"] == "merged" and body["merge_id"]
    assert body["patient"]["id"] == pair["survivor"]
    assert body["patient"]["allergy_status"] == "no_known_allergies"  # the duplicate's, taken
    assert r["ETag"] == body["patient"]["etag"]
    retired = clerk.get(f"/api/v1/patients/{pair['retired']}").json()
    assert retired["merged_into"] == pair["survivor"]
    assert retired["merge"]["state"] == "merged"
    # either MRN finds the survivor
    for mrn in (retired["mrn"], body["patient"]["mrn"]):
        [found] = clerk.get("/api/v1/patients", {"mrn": mrn}).json()
        assert found["id"] == pair["survivor"], mrn
    # the stay moved: the survivor is the one admitted in M103
    [stay] = clerk.get(f"/api/v1/patients/{pair['survivor']}/admissions").json()
    assert (stay["bed"], stay["status"]) == ("M103", "active")
    # every command on the retired record: 409 naming the survivor, Location to it
    refused = clerk.post(f"/api/v1/patients/{pair['retired']}/discharge",
                         {"disposition": "home"}, content_type=J)
    assert refused.status_code == 409, refused.content
    assert refused["Content-Type"] == "application/problem+json"
    assert refused["Location"] == f"/api/v1/patients/{pair['survivor']}"
    problem = refused.json()
    assert problem["type"] == "/api/v1/problems/patient-merged"
    assert problem["merged_into"] == pair["survivor"]
    assert body["patient"]["mrn"] in problem["detail"]
    nurse = pair["nurse"].post(f"/api/v1/patients/{pair['retired']}/allergies",
                               {"allergen_code": "LATEX", "severity": "mild"}, content_type=J)
    assert (nurse.status_code, nurse["Location"]) == (
        409, f"/api/v1/patients/{pair['survivor']}")


def test_if_match_is_required_and_a_stale_one_is_refused(pair: dict) -> None:
    clerk = pair["clerk"]
    missing = _merge(clerk, pair, etag=None)
    assert missing.status_code == 428, missing.content
    assert missing.json()["type"] == "/api/v1/problems/precondition-required"
    stale = clerk.get(f"/api/v1/patients/{pair['survivor']}")["ETag"]
    clerk.put(f"/api/v1/patients/{pair['survivor']}", {
        "given_name": "Zoë", "family_name": "Ibáñez Ruiz", "birth_date": "1961-02-03",
        "sex": "female"}, content_type=J, HTTP_IF_MATCH=stale)
    assert _merge(clerk, pair, etag=stale).status_code == 412
    assert _merge(clerk, pair, retired_etag='"0000-stale"').status_code == 412
    assert clerk.get(f"/api/v1/patients/{pair['retired']}").json()["merged_into"] is None


def test_refusals_are_409_problems_naming_the_conflict(pair: dict, admit) -> None:
    clerk = pair["clerk"]
    clerk.post(f"/api/v1/patients/{pair['survivor']}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M104", "reason": "Fall"},
        content_type=J)
    both = _merge(clerk, pair)
    assert both.status_code == 409, both.content
    assert both.json()["type"] == "/api/v1/problems/both-admitted"
    assert both.json()["conflicts"][0]["type"] == "both-admitted"
    other = admit("Other", bed="M105")
    pair["doc"].post(f"/api/v1/patients/{pair['survivor']}/allergies", {
        "allergen_code": "PENICILLINS", "severity": "severe"}, content_type=J)
    clerk.post(f"/api/v1/patients/{pair['survivor']}/discharge", {"disposition": "home"},
               content_type=J)
    contradict = _merge(clerk, pair)  # the duplicate: no known allergies; the survivor: one
    assert contradict.status_code == 409
    assert contradict.json()["type"] == "/api/v1/problems/allergy-status-conflict"
    assert "Penicillins" in contradict.json()["detail"]
    itself = _merge(clerk, {**pair, "retired": pair["survivor"]})
    assert itself.status_code == 422
    no_reason = _merge(clerk, {**pair, "retired": other}, reason="")
    assert no_reason.status_code == 422
    assert pair["nurse"].post(f"/api/v1/patients/{pair['survivor']}/merge", {
        "retired_id": other, "retired_etag": "", "reason": REASON}, content_type=J,
        HTTP_IF_MATCH="x").status_code == 403  # records staff only


def test_a_merge_is_undone_with_a_reason(pair: dict) -> None:
    clerk = pair["clerk"]
    merged = _merge(clerk, pair).json()
    undo = clerk.post(f"/api/v1/patients/{pair['survivor']}/merges/{merged['merge_id']}/undo",
                      {"reason": "Two sisters, not one person"}, content_type=J)
    assert undo.status_code == 200, undo.content
    assert undo.json()["state"] == "unmerged"
    assert clerk.get(f"/api/v1/patients/{pair['survivor']}/admissions").json() == []
    retired = clerk.get(f"/api/v1/patients/{pair['retired']}").json()
    assert (retired["merged_into"], retired["merge"]) == (None, None)
    again = clerk.post(f"/api/v1/patients/{pair['survivor']}/merges/{merged['merge_id']}/undo",
                       {"reason": "Once more"}, content_type=J)
    assert again.status_code == 409 and again.json()["type"] == "/api/v1/problems/not-merged"
    unknown = clerk.post(f"/api/v1/patients/{pair['survivor']}/merges/nope/undo",
                         {"reason": "Once more"}, content_type=J)
    assert unknown.status_code == 404


def test_the_openapi_document_says_so(api_client) -> None:
    schema = api_client("clerk").get("/api/v1/openapi.json").json()
    merge = schema["paths"]["/api/v1/patients/{survivor_id}/merge"]["post"]
    [if_match] = [p for p in merge["parameters"] if p["name"] == "If-Match"]
    assert if_match["required"] is True
    for status in ("200", "409", "412", "422", "428"):
        assert status in merge["responses"], status
    assert "application/problem+json" in merge["responses"]["409"]["content"]
    assert "Location" in merge["responses"]["409"]["headers"]
    undo = schema["paths"]["/api/v1/patients/{survivor_id}/merges/{merge_id}/undo"]
    assert "409" in undo["post"]["responses"]


def test_fhir_links_the_retired_patient_to_the_survivor(pair: dict) -> None:
    clerk = pair["clerk"]
    retired_mrn = clerk.get(f"/api/v1/patients/{pair['retired']}").json()["mrn"]
    assert _merge(clerk, pair).status_code == 200
    retired = clerk.get(f"/fhir/R4/Patient/{pair['retired']}")
    assert retired.status_code == 200, retired.content
    assert retired["Content-Type"].startswith("application/fhir+json")
    body = retired.json()
    assert body["active"] is False
    assert body["link"] == [{"other": {"reference": f"Patient/{pair['survivor']}"},
                             "type": "replaced-by"}]
    survivor = clerk.get(f"/fhir/R4/Patient/{pair['survivor']}").json()
    assert survivor["active"] is True
    assert survivor["link"] == [{"other": {"reference": f"Patient/{pair['retired']}"},
                                 "type": "replaces"}]
    assert {(i.get("use"), i["value"]) for i in survivor["identifier"]} >= {("old", retired_mrn)}


def test_the_retired_chart_says_where_the_record_went_and_offers_no_action(
        pair: dict, make_user) -> None:
    assert _merge(pair["clerk"], pair).status_code == 200
    survivor_mrn = pair["clerk"].get(f"/api/v1/patients/{pair['survivor']}").json()["mrn"]
    nurse = Client()
    nurse.force_login(make_user("rn-merged", "nurse", "clerk", "clinician"))
    base = f"/admin/patients/{pair['retired']}/"
    chart = nurse.get(base)
    assert chart.status_code == 200
    html = chart.content.decode()
    assert "Merged into" in html
    assert f'href="/admin/patients/{pair["survivor"]}/" id="merged-into-link">{survivor_mrn}' \
        in html
    for action in ("demographics-link", "allergy-link", "admit-link", "transfer-link",
                   "wristband-link"):
        assert f'id="{action}"' not in html, action
    form = nurse.get(base + "allergies/add/")
    refused = nurse.post(base + "allergies/add/", {
        "allergen_code": "LATEX", "severity": "mild", "criticality": "low",
        "etag": form.context["form"].initial["etag"]})
    assert refused.status_code == 200
    said = " ".join(str(e) for e in refused.context["form"].non_field_errors())
    assert f"merged into {survivor_mrn}" in said
    survivor = nurse.get(f"/admin/patients/{pair['survivor']}/").content.decode()
    assert 'id="merged-into"' not in survivor and 'id="allergy-link"' in survivor
