"""Vital signs in FHIR R4: each value of an observation set an Observation of the
vital-signs profile (LOINC, UCUM), the NEWS2 total one derived from them; read and searched
by patient, category, code (system|code too) and date (prefixes, offsets, the hospital's
time); a bad value a 400 OperationOutcome; every body validated by its R4 model."""

from __future__ import annotations

from urllib.parse import quote

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


@pytest.fixture
def two_sets(team, admit, settings) -> str:
    """A full set at 08:00 UTC and a heart rate alone at 10:30:00.123456 in Paris (09:30 UTC),
    the hospital in Berlin (UTC+1 in November)."""
    settings.HOSPITAL_TIME_ZONE = "Europe/Berlin"
    pid = admit("Searched", given="Sé")
    for body in (SET, {"pulse": "91", "taken_at": "2026-11-27T10:30:00.123456+01:00"}):
        assert team["nurse"].post(f"/api/v1/patients/{pid}/observations", body,
                                  content_type=J).status_code == 201
    return pid


def _codes(team, pid: str, query: str) -> list[tuple[str, str]]:
    """(code, effective time) of what ``Observation?patient=…&<query>`` finds, sorted."""
    query = "&".join(f"{k}={quote(v, safe=',')}" for k, v in
                     (p.split("=", 1) for p in query.split("&")))
    found = resources(fhir(team["doc"], f"/Observation?patient={pid}&{query}"))
    return sorted((r["code"]["coding"][0]["code"], r["effectiveDateTime"]) for r in found)


EIGHT, HALF_NINE = "2026-11-27T08:00:00Z", "2026-11-27T09:30:00Z"


@pytest.mark.parametrize(("query", "expected"), [
    ("code=8867-4", [("8867-4", EIGHT), ("8867-4", HALF_NINE)]),
    ("code=http://loinc.org|8867-4", [("8867-4", EIGHT), ("8867-4", HALF_NINE)]),
    ("code=http://snomed.info/sct|8867-4", []),
    ("code=|8867-4", []),  # "no system": these have one
    ("code=8310-5,9279-1", [("8310-5", EIGHT), ("9279-1", EIGHT)]),
    ("code=8867-4&code=8310-5", []),  # repeats: all of them
    ("code=http://snomed.info/sct|1104051000000101", [("1104051000000101", EIGHT)]),
    ("code=8867-4&date=ge2026-11-27T09:00:00Z", [("8867-4", HALF_NINE)]),
    ("code=8867-4&date=lt2026-11-27T10:00+01:00", [("8867-4", EIGHT)]),
    ("code=8867-4&date=gt2026-11-27T09:00", [("8867-4", HALF_NINE)]),  # after that minute
    ("code=8867-4&date=le2026-11-27T09:00", [("8867-4", EIGHT)]),  # Berlin's 09:00 = 08:00Z
    ("code=8867-4&date=eq2026-11-27T10:30", [("8867-4", HALF_NINE)]),  # the minute, Berlin
    ("code=8867-4&date=2026-11-27", [("8867-4", EIGHT), ("8867-4", HALF_NINE)]),
    ("code=8867-4&date=ge2026-11-28", []),
    ("code=8867-4&date=ge2026-11-27T08:00:00.5Z&date=lt2026-11-27T09:30:01Z",
     [("8867-4", HALF_NINE)]),
])
def test_observations_are_searched_by_code_and_date(team, two_sets, query, expected) -> None:
    assert _codes(team, two_sets, query) == expected


def test_an_offsets_plus_sent_unencoded_is_read_as_plus(team, two_sets) -> None:
    raw = f"/Observation?patient={two_sets}&code=8867-4&date=ge2026-11-27T10:00:00+01:00"
    assert [r["effectiveDateTime"] for r in resources(fhir(team["doc"], raw))] == [HALF_NINE]


@pytest.mark.parametrize(("value", "code"), [
    ("date=tomorrow", "invalid"), ("date=2026-13-01", "invalid"),
    ("date=2026-11-27T25:00", "invalid"), ("date=2026-11T09:00", "invalid"),
    ("date=ne2026-11-27", "not-supported"), ("date=ap2026-11-27", "not-supported"),
    ("date=ge", "invalid"), ("code=a|b|c", "invalid"), ("code=88%2067-4", "invalid"),
    ("code=http://loinc.org|", "invalid"), ("code=8867-4,", "invalid"),
])
def test_a_bad_code_or_date_is_a_400_operation_outcome(team, two_sets, value, code) -> None:
    body = fhir(team["doc"], f"/Observation?patient={two_sets}&{value}", status=400)
    assert body["resourceType"] == "OperationOutcome"
    assert body["issue"][0]["code"] == code
    assert body["issue"][0]["diagnostics"].split()[0].strip(":") in ("date", "code", "The")
