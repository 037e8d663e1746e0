"""Admins edit reference data in the UI; others cannot."""

from __future__ import annotations

import pytest
from django.test import Client

from cosmos_backend import keys

pytestmark = pytest.mark.django_db


def test_it_lets_admins_add_and_retire_entries(make_user, reference_data, his_store) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(make_user("boss", "admin"))
    assert client.get("/admin/reference/").status_code == 200
    r = client.post("/admin/reference/Medication/", {"code": "VANC", "name": "Vancomycin",
                                                     "active": "on"})
    assert r.status_code == 302
    assert his_store.read(keys.reference("Medication"), "VANC")["docContents"]["name"] == "Vancomycin"
    dup = client.post("/admin/reference/Medication/", {"code": "VANC", "name": "x"})
    assert "exists" in " ".join(dup.context["form"].errors["code"])
    client.post("/admin/reference/Medication/VANC/", {"code": "VANC", "name": "Vancomycin"})
    assert his_store.read(keys.reference("Medication"), "VANC")["docContents"]["active"] is False
    bad = client.post("/admin/reference/Medication/", {"code": "a/b", "name": "x"})
    assert bad.context["form"].errors["code"]


def test_it_forbids_reference_pages_to_clinicians(make_user, reference_data) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(make_user("doc2", "clinician"))
    assert client.get("/admin/reference/").status_code == 403
    assert client.post("/admin/reference/Medication/", {"code": "X", "name": "X"}).status_code == 403
