"""Admin-style pages: errors land on the fields, nothing is written, roles are enforced."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

GOOD = {"given_name": "Ana", "family_name": "García", "birth_date": "1980-05-01",
        "sex": "female", "mrn": ""}


@pytest.fixture
def clerk(make_user, reference_data) -> Client:
    client = Client()
    client.force_login(make_user("desk", "clerk"))
    return client


def _register(client: Client, **changes: str):
    return client.post("/admin/patients/register/", {**GOOD, **changes})


def test_it_registers_and_redirects_to_the_chart(clerk: Client) -> None:
    response = _register(clerk)
    assert response.status_code == 302
    chart = clerk.get(response["Location"])
    assert "GARCÍA, Ana" in chart.content.decode()
    assert "PatientRegistered" in chart.content.decode()


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"given_name": ""}, "given_name", "This field is required."),
    ({"birth_date": "31/31/1980"}, "birth_date", "Enter a real date: pick it from the "
                                                  "calendar, or type it in the order the box "
                                                  "shows."),
    ({"birth_date": "2999-01-01"}, "birth_date", "cannot be in the future"),
    ({"mrn": "no spaces!"}, "mrn", "3–20 letters, digits or dashes"),
])
def test_it_shows_field_errors_and_writes_nothing(clerk: Client, his_store, changes: dict,
                                                  field: str, message: str) -> None:
    before = his_store.count()
    response = _register(clerk, **changes)
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors[field])
    assert his_store.count() == before


def test_it_refuses_a_duplicate_mrn_on_the_field(clerk: Client, his_store) -> None:
    assert _register(clerk, mrn="DUP123").status_code == 302
    before = his_store.count()
    response = _register(clerk, mrn="dup123")
    assert "already registered" in " ".join(response.context["form"].errors["mrn"])
    assert his_store.count() == before


def test_it_refuses_an_unknown_department_on_the_admit_form(clerk: Client, his_store) -> None:
    chart_url = _register(clerk)["Location"]
    before = his_store.count()
    response = clerk.post(chart_url + "admit/", {"department_id": "NOPE", "ward_id": "CARD-A",
                                                 "reason": "x"})
    assert response.status_code == 200
    assert "department_id" in response.context["form"].errors
    assert his_store.count() == before


def test_it_puts_a_ward_from_another_department_on_the_ward_field(clerk: Client) -> None:
    chart_url = _register(clerk)["Location"]
    response = clerk.post(chart_url + "admit/", {"department_id": "CARD", "ward_id": "MED-1",
                                                 "reason": "x"})
    said = " ".join(response.context["form"].errors["ward_id"])
    assert "Medical Ward 1 is not a ward of Cardiology" in said  # names, not codes
    assert "MED-1" not in said and "CARD" not in said


def test_it_admits_and_shows_a_discharge_form_carrying_the_etag(clerk: Client) -> None:
    chart_url = _register(clerk)["Location"]
    response = clerk.post(chart_url + "admit/", {"department_id": "CARD", "ward_id": "CARD-A",
                                                 "bed": "A03", "reason": "Syncope"})
    assert response.status_code == 302
    chart = clerk.get(chart_url)
    assert chart.context["discharge_form"].initial["etag"] == \
        chart.context["active_admission"]["etag"]


def test_it_tells_the_second_of_two_discharges_that_the_record_changed(clerk: Client) -> None:
    chart_url = _register(clerk)["Location"]
    clerk.post(chart_url + "admit/", {"department_id": "MED", "ward_id": "MED-1",
                                      "reason": "Sepsis"})
    etag = clerk.get(chart_url).context["active_admission"]["etag"]
    confirmed = {"disposition": "home", "etag": etag, "orders": "", "confirm": "1"}
    first = clerk.post(chart_url + "discharge/", confirmed, follow=True)
    assert "Discharged" in first.content.decode()
    second = clerk.post(chart_url + "discharge/", confirmed, follow=True)
    assert "no active admission" in second.content.decode()


def test_it_forbids_registration_pages_to_nurses(make_user) -> None:
    client = Client()
    client.force_login(make_user("ward-nurse", "nurse"))
    assert client.get("/admin/patients/register/").status_code == 403
