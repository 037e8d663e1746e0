"""Admins edit reference data in the UI; others cannot."""

from __future__ import annotations

import pytest
from django.test import Client

from hisadmin.core import keys

pytestmark = pytest.mark.django_db


TEICO = {"code": "TEICO", "name": "Teicoplanin", "ingredients": ["VANCOMYCIN"],
         "classes": ["GLYCOPEPTIDES"], "routes": ["IV", "IM"], "dose_unit": "mg",
         "max_single_dose": "800", "max_daily_dose": "800",
         "source": "standard adult product information"}


def test_it_lets_admins_add_and_retire_entries(make_user, reference_data, his_store) -> None:
    client = Client()
    client.force_login(make_user("boss", "admin"))
    assert client.get("/admin/reference/").status_code == 200
    r = client.post("/admin/reference/Medication/", {**TEICO, "active": "on"})
    assert r.status_code == 302
    assert his_store.read(keys.reference("Medication"), "TEICO")["docContents"]["name"] == \
        "Teicoplanin"
    dup = client.post("/admin/reference/Medication/", {**TEICO, "name": "x"})
    assert "exists" in " ".join(dup.context["form"].errors["code"])
    client.post("/admin/reference/Medication/TEICO/", TEICO)
    assert his_store.read(keys.reference("Medication"), "TEICO")["docContents"]["active"] is False
    bad = client.post("/admin/reference/Medication/", {**TEICO, "code": "a/b"})
    assert bad.context["form"].errors["code"]


def test_it_forbids_reference_pages_to_clinicians(make_user, reference_data) -> None:
    client = Client()
    client.force_login(make_user("doc2", "clinician"))
    assert client.get("/admin/reference/").status_code == 403
    assert client.post("/admin/reference/Medication/", {"code": "X", "name": "X"}).status_code == 403


def test_it_edits_a_wards_beds_but_keeps_an_occupied_one(make_user, reference_data,
                                                         his_store, api_client) -> None:
    clerk = api_client("clerk")
    pid = clerk.post("/api/v1/patients", {"given_name": "A", "family_name": "Bed",
                                          "birth_date": "1970-01-01"},
                     content_type="application/json").json()["id"]
    assert clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-2", "bed": "M201", "reason": "x"},
        content_type="application/json").status_code == 201
    client = Client()
    client.force_login(make_user("boss2", "admin"))
    url = "/admin/reference/Ward/MED-2/"
    form = client.get(url).context["form"]
    assert form.initial["beds"].startswith("M201, M202")
    refused = client.post(url, {"code": "MED-2", "name": "Medical Ward 2",
                                "department_id": "MED", "beds": "M202, M203", "active": "on",
                                "etag": form.initial["etag"]})
    assert "M201 is occupied" in " ".join(refused.context["form"].errors["beds"])
    ok = client.post(url, {"code": "MED-2", "name": "Medical Ward 2", "department_id": "MED",
                           "beds": "M201, M202, M299", "active": "on",
                           "etag": form.initial["etag"]})
    assert ok.status_code == 302
    ward = his_store.read(keys.reference("Ward"), "MED-2")["docContents"]
    assert ward["beds"] == ["M201", "M202", "M299"] and ward["departmentId"] == "MED"
    stale = client.post(url, {"code": "MED-2", "name": "Renamed", "department_id": "MED",
                              "beds": "M201", "active": "on", "etag": form.initial["etag"]},
                        follow=True)
    assert "changed by someone else meanwhile" in stale.content.decode()
    assert his_store.read(keys.reference("Ward"), "MED-2")["docContents"]["name"] == \
        "Medical Ward 2"
