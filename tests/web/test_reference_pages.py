"""Admins edit coded reference data (a medication's classes and limits, an allergen's kind,
a unit's dimension, a lab test's analytes) through the reference pages and their use case."""

from __future__ import annotations

import pytest
from django.test import Client

from cosmos_backend.outbox import is_event
from cosmos_backend.store import Query
from hisadmin.core import keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(make_user, reference_data) -> Client:
    client = Client()
    client.force_login(make_user("boss", "admin"))
    return client


def stored(his_store, type_name: str, code: str) -> dict:
    return his_store.read(keys.reference(type_name), code)["docContents"]


def medication_post(form, **changes) -> dict:
    """The form as shown, as a browser would post it back, with ``changes``."""
    data = {name: value for name, value in form.initial.items()
            if name in form.fields and value is not None}
    data["active"] = "on"
    data.update(changes)
    return data


def test_it_edits_a_medications_classes_by_name(admin_client, his_store) -> None:
    url = "/admin/reference/Medication/IBU/"
    page = admin_client.get(url)
    form = page.context["form"]
    html = page.content.decode()
    assert form.initial["classes"] == ["NSAIDS"] and form.initial["dose_unit"] == "mg"
    assert dict(form.fields["classes"].choices)["NSAIDS"] == "NSAIDs"
    dose_units = dict(form.fields["dose_unit"].choices)
    assert dose_units["mcg"] == "microgram" and "g_l" not in dose_units  # no lab units
    assert ">Penicillins</option>" in html and ">milligram</option>" in html
    assert "Oral" in html  # routes and details by name
    r = admin_client.post(url, medication_post(form, classes=["NSAIDS", "SALICYLATES"],
                                               max_single_dose="1 000",
                                               prn_min_interval_hours="6"))
    assert "without spaces" in str(r.context["form"].errors["max_single_dose"])  # refused
    assert 'value="1 000"' in r.content.decode()  # as typed
    r = admin_client.post(url, medication_post(form, classes=["NSAIDS", "SALICYLATES"],
                                               max_single_dose="600",
                                               prn_min_interval_hours="6,5"))
    assert r.status_code == 302, r.context["form"].errors
    ibu = stored(his_store, "Medication", "IBU")
    assert ibu["classes"] == ["NSAIDS", "SALICYLATES"]
    assert ibu["maxSingleDose"] == 600 and ibu["prnMinIntervalHours"] == 6.5  # a comma
    assert ibu["ingredients"] == ["IBUPROFEN"] and ibu["source"]
    changes = [d["docContents"] for d in his_store.query_all(keys.reference("Medication"),
                                                              Query())
               if is_event(d) and d["docContents"]["data"]["code"] == "IBU"]
    assert changes[-1]["actor"]["username"] == "boss"
    assert changes[-1]["data"]["entry"]["classes"] == ["NSAIDS", "SALICYLATES"]


def test_it_refuses_an_unknown_class_and_inconsistent_limits(admin_client, his_store) -> None:
    url = "/admin/reference/Medication/IBU/"
    form = admin_client.get(url).context["form"]
    unknown = admin_client.post(url, medication_post(form, classes=["NOT_A_CLASS"]))
    assert unknown.status_code == 200 and unknown.context["form"].errors["classes"]
    limits = admin_client.post(url, medication_post(form, max_single_dose="3000"))
    assert "below the single-dose" in " ".join(limits.context["form"].errors["max_daily_dose"])
    no_route = admin_client.post(url, medication_post(form, routes=[]))
    assert no_route.context["form"].errors["routes"]
    assert stored(his_store, "Medication", "IBU")["classes"] == ["NSAIDS"]


def test_it_edits_allergens_units_and_lab_tests(admin_client, his_store) -> None:
    r = admin_client.post("/admin/reference/Allergen/", {
        "code": "KIWI", "name": "Kiwi fruit", "kind": "food", "active": "on"})
    assert r.status_code == 302
    assert stored(his_store, "Allergen", "KIWI")["kind"] == "food"
    listing = admin_client.get("/admin/reference/Allergen/").content.decode()
    assert "Kiwi fruit" in listing and "Food" in listing
    r = admin_client.post("/admin/reference/Unit/", {
        "code": "kg", "name": "kilogram", "dimension": "mass", "factor": "1000000",
        "active": "on"})
    assert r.status_code == 302
    assert stored(his_store, "Unit", "kg")["factor"] == 1000000
    url = "/admin/reference/LabTest/CRP/"
    form = admin_client.get(url).context["form"]
    assert form.initial["analytes"] == "CRP | C-reactive protein | mg_l | 0 | 5"
    bad = admin_client.post(url, {"code": "CRP", "name": "C-reactive protein", "active": "on",
                                  "analytes": "CRP | C-reactive protein | mg/dl | 0 | 5",
                                  "etag": form.initial["etag"]})
    assert "not a unit code" in " ".join(bad.context["form"].errors["analytes"])
    r = admin_client.post(url, {"code": "CRP", "name": "C-reactive protein", "active": "on",
                                "analytes": "CRP | C-reactive protein | mg_l | 0 | 10\n"
                                            "PCT | Procalcitonin | ng_l | 0 | 500",
                                "etag": form.initial["etag"]})
    assert r.status_code == 302
    assert stored(his_store, "LabTest", "CRP")["analytes"] == [
        {"code": "CRP", "name": "C-reactive protein", "unit": "mg_l", "low": 0, "high": 10},
        {"code": "PCT", "name": "Procalcitonin", "unit": "ng_l", "low": 0, "high": 500}]


def test_it_shows_and_edits_a_medications_hard_limits(admin_client, his_store) -> None:
    url = "/admin/reference/Medication/IBU/"
    page = admin_client.get(url)
    form = page.context["form"]
    assert form.initial["hard_max_single_dose"] == 1600
    assert form.initial["hard_max_daily_dose"] == 4800
    html = page.content.decode()
    assert 'name="hard_max_single_dose"' in html and 'name="hard_max_daily_dose"' in html
    assert "hard stop above 1600 milligram a dose, 4800 milligram a day" in html
    saved = admin_client.post(url, medication_post(form, hard_max_single_dose="1200",
                                                   hard_max_daily_dose=""))
    assert saved.status_code == 302, saved.context["form"].errors
    ibu = stored(his_store, "Medication", "IBU")
    assert ibu["hardMaxSingleDose"] == 1200 and ibu.get("hardMaxDailyDose") is None
    listing = admin_client.get(url).content.decode()  # the daily one: twice the maximum
    assert "hard stop above 1200 milligram a dose, 4800 milligram a day" in listing


def test_it_refuses_a_hard_limit_below_its_maximum_on_its_field(admin_client, his_store) -> None:
    url = "/admin/reference/Medication/IBU/"
    form = admin_client.get(url).context["form"]
    single = admin_client.post(url, medication_post(form, hard_max_single_dose="500"))
    assert single.status_code == 200
    assert "below the maximum single dose" in " ".join(
        single.context["form"].errors["hard_max_single_dose"])
    daily = admin_client.post(url, medication_post(form, hard_max_daily_dose="2000"))
    assert "below the maximum daily dose" in " ".join(
        daily.context["form"].errors["hard_max_daily_dose"])
    crossed = admin_client.post(url, medication_post(form, hard_max_single_dose="2500",
                                                     hard_max_daily_dose="2400"))
    assert "below the hard single-dose limit" in " ".join(
        crossed.context["form"].errors["hard_max_daily_dose"])
    assert stored(his_store, "Medication", "IBU")["hardMaxSingleDose"] == 1600
