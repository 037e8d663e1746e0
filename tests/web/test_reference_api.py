"""``/api/v1/reference``: medications, allergens and lab tests for clients, snake_case keys,
active entries only, any clinical role; 401 / 403 as problems."""

from __future__ import annotations

import pytest
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases

pytestmark = pytest.mark.django_db

MEDICATION_KEYS = {"code", "name", "ingredients", "classes", "routes", "dose_unit",
                   "max_single_dose", "max_daily_dose", "hard_max_single_dose",
                   "hard_max_daily_dose", "prn_min_interval_hours"}


def test_it_lists_medications_with_their_codes_and_limits(api_client, reference_data) -> None:
    r = api_client("clinician").get("/api/v1/reference/medications")
    assert r.status_code == 200
    items = r.json()
    assert len(items) >= 20 and all(set(i) == MEDICATION_KEYS for i in items)
    amox = next(i for i in items if i["code"] == "AMOX")
    assert amox["name"] == "Amoxicillin" and amox["ingredients"] == ["AMOXICILLIN"]
    assert {"PENICILLINS", "BETA_LACTAMS"} <= set(amox["classes"])
    assert "PO" in amox["routes"] and amox["dose_unit"] == "mg"
    assert amox["max_single_dose"] == 1000 and amox["max_daily_dose"] == 3000
    assert amox["hard_max_single_dose"] == 2000 and amox["hard_max_daily_dose"] == 6000
    insulin = next(i for i in items if i["code"] == "INSUL")
    assert insulin["dose_unit"] == "units"


def test_it_lists_allergens_and_lab_tests(api_client, reference_data) -> None:
    nurse = api_client("nurse")
    allergens = nurse.get("/api/v1/reference/allergens").json()
    assert all(set(a) == {"code", "name", "kind"} for a in allergens)
    by_code = {a["code"]: a for a in allergens}
    assert by_code["PENICILLINS"] == {"code": "PENICILLINS", "name": "Penicillins",
                                      "kind": "drug_class"}
    assert by_code["LATEX"]["kind"] == "environment" and by_code["PEANUT"]["kind"] == "food"
    tests = api_client("clerk").get("/api/v1/reference/lab-tests").json()
    assert all(set(t) == {"code", "name", "analytes"} for t in tests)
    bmp = next(t for t in tests if t["code"] == "BMP")
    assert {"NA", "K", "CREAT", "GLU"} <= {a["code"] for a in bmp["analytes"]}
    sodium = next(a for a in bmp["analytes"] if a["code"] == "NA")
    assert sodium == {"code": "NA", "name": "Sodium", "unit": "mmol_l", "low": 133, "high": 146}


def test_it_leaves_retired_entries_out(api_client, reference_data, his_store) -> None:
    use_cases.save_reference_entry(use_cases.SaveReferenceEntry(
        "Allergen", "SESAME", {"active": False}), UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    codes = {a["code"] for a in api_client("nurse").get("/api/v1/reference/allergens").json()}
    assert "SESAME" not in codes and "PEANUT" in codes


def test_it_answers_the_hard_limits_that_apply(api_client, reference_data, his_store) -> None:
    """A hard limit the entry does not set is twice the maximum; one it sets is its own."""
    use_cases.save_reference_entry(use_cases.SaveReferenceEntry(
        "Medication", "IBU", {"hardMaxSingleDose": None, "hardMaxDailyDose": 3000}),
        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    items = api_client("nurse").get("/api/v1/reference/medications").json()
    ibu = next(i for i in items if i["code"] == "IBU")
    assert ibu["hard_max_single_dose"] == 1600 and ibu["hard_max_daily_dose"] == 3000


@pytest.mark.parametrize("path", ["medications", "allergens", "lab-tests"])
def test_it_answers_401_and_403_as_problems(api_client, reference_data, path: str) -> None:
    anonymous = Client().get(f"/api/v1/reference/{path}")
    assert anonymous.status_code == 401
    assert anonymous["Content-Type"].startswith("application/problem+json")
    nobody = api_client().get(f"/api/v1/reference/{path}")
    assert nobody.status_code == 403 and nobody.json()["title"] == "Forbidden"
    for role in ("clerk", "clinician", "nurse"):
        assert api_client(role).get(f"/api/v1/reference/{path}").status_code == 200


def test_it_documents_every_answer(api_client) -> None:
    schema = api_client("clerk").get("/api/v1/openapi.json").json()
    for path in ("medications", "allergens", "lab-tests"):
        answers = schema["paths"][f"/api/v1/reference/{path}"]["get"]["responses"]
        assert {"200", "401", "403"} <= set(answers)
        assert "application/json" in answers["200"]["content"]
