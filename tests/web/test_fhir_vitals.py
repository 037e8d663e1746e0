"""Vital signs in FHIR R4: each value of an observation set an Observation of the
vital-signs profile (LOINC, UCUM), the NEWS2 total one derived from them; read and searched
by patient and category; every body validated by its R4 model."""

from __future__ import annotations

import pytest

from tests.web.test_fhir_api import fhir, resources

pytestmark = pytest.mark.django_db
J = "application/json"
SET = {"respiration_rate": 22, "spo2": 94, "on_oxygen": True, "oxygen_device": "nasal",
       "oxygen_flow_l_min": "2", "systolic_bp": 104, "diastolic_bp": 62, "pulse": 112,
       "consciousness": "A", "temperature": 38.4, "taken_at": "2026-11-27T08:00:00+00:00"}


def test_a_set_is_vital_signs_and_a_news2_score_derived_from_them(team, admit) -> None:
    pid = admit("Vital", given="Vi")
    assert team["nurse"].post(f"/api/v1/patients/{pid}/observations", SET,
                              content_type=J).status_code == 201
    assert team["nurse"].post(f"/api/v1/patients/{pid}/observations", {
        "pulse": 90, "taken_at": "2026-11-27T09:00:00+00:00"},
        content_type=J).status_code == 201  # partial: a heart rate, no score
    vital = resources(fhir(team["doc"], f"/Observation?patient={pid}&category=vital-signs"))
    first = [r for r in vital if r["effectiveDateTime"].startswith("2026-11-27T08:00")]
    by_code = {r["code"]["coding"][0]["code"]: r for r in first}
    assert {"9279-1", "8867-4", "59408-5", "85354-9", "8310-5", "3151-8"} <= set(by_code)
    assert len([r for r in vital if r["code"]["coding"][0]["code"] == "8867-4"]) == 2
    assert by_code["8310-5"]["valueQuantity"] == {"value": 38.4, "unit": "Cel",
                                                   "system": "http://unitsofmeasure.org",
                                                   "code": "Cel"}
    bp = by_code["85354-9"]
    assert [c["valueQuantity"]["value"] for c in bp["component"]] == [104, 62]
    assert all(r["category"][0]["coding"][0]["code"] == "vital-signs" for r in vital)
    [score] = resources(fhir(team["doc"], f"/Observation?patient={pid}&category=survey"))
    assert score["code"]["coding"][0] == {"system": "http://snomed.info/sct",
                                          "code": "1104051000000101",
                                          "display": "Royal College of Physicians NEWS2 "
                                                     "total score"}
    assert score["valueInteger"] == 9  # 2 + 1 + 2 (oxygen) + 1 + 2 + 0 + 1
    assert len(score["derivedFrom"]) == 6
    for ref in score["derivedFrom"]:
        fhir(team["doc"], f"/{ref['reference']}")  # each one reads back, valid
    assert fhir(team["doc"], f"/Observation/{score['id']}") == score
    assert fhir(team["doc"], f"/Observation?patient={pid}&category=laboratory")["total"] == 0
    fhir(team["doc"], f"/Observation/{score['id'][:-1]}7", status=404)
