"""Allergy pages: the coded form, "no known allergies", removal through a confirmation with a
reason, the chart's allergy section, and the patient banner on every patient page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def world(api_client, make_user, reference_data) -> dict:
    clerk = api_client("clerk")
    pid = clerk.post("/api/v1/patients", {"given_name": "Rosa", "family_name": "Banner",
                                          "birth_date": "1950-06-01", "sex": "female",
                                          "mrn": "BAN001"}, content_type=J).json()["id"]
    clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M104", "reason": "Pneumonia"},
        content_type=J)
    doc, nurse = Client(), Client()
    doc.force_login(make_user("dr-page", "clinician"))
    nurse.force_login(make_user("rn-page", "nurse"))
    return {"pid": pid, "doc": doc, "nurse": nurse, "api": api_client("clinician"),
            "base": f"/admin/patients/{pid}/"}


def etag(client: Client, world: dict) -> str:
    return client.get(world["base"] + "allergies/add/").context["form"].initial["etag"]


def test_the_chart_says_unknown_until_asked_and_offers_no_known_allergies(world: dict) -> None:
    chart = world["nurse"].get(world["base"]).content.decode()
    assert "Allergies not yet asked" in chart
    assert "No known allergies recorded" not in chart and "No known allergies (recorded" \
        not in chart
    assert 'id="nka-link"' in chart
    confirm = world["nurse"].get(world["base"] + "allergies/none/")
    assert confirm.status_code == 200
    assert 'id="patient-banner"' in confirm.content.decode()
    done = world["nurse"].post(world["base"] + "allergies/none/",
                               {"etag": confirm.context["form"].initial["etag"]}, follow=True)
    page = done.content.decode()
    assert "No known allergies recorded." in page  # the message
    assert re.search(r"No known allergies \(recorded by rn-page on \w{3} \d{1,2} \w{3} \d{4}\)", page)
    assert 'id="nka-link"' not in page


def test_the_allergy_form_offers_allergens_by_name_with_nothing_chosen(world: dict) -> None:
    page = world["nurse"].get(world["base"] + "allergies/add/")
    html = page.content.decode()
    assert '<option value="" selected>— choose an allergen —</option>' in html
    assert '<option value="PENICILLINS">Penicillins</option>' in html
    assert 'optgroup label="Food"' in html
    assert "not checked against orders" in html
    for field in ("reaction", "severity", "criticality", "substance"):
        assert f'name="{field}"' in html
    refused = world["nurse"].post(world["base"] + "allergies/add/", {
        "allergen_code": "PEANUT", "substance": "Peanut", "severity": "severe",
        "etag": etag(world["nurse"], world)})
    assert refused.status_code == 200 and refused.context["form"].errors["substance"]
    saved = world["nurse"].post(world["base"] + "allergies/add/", {
        "allergen_code": "PENICILLINS", "reaction": "Anaphylaxis", "severity": "severe",
        "criticality": "high", "etag": etag(world["nurse"], world)})
    assert saved.status_code == 302, saved.context["form"].errors


def test_removal_goes_through_a_confirmation_with_a_reason(world: dict, his_store) -> None:
    aid = world["api"].post(f"/api/v1/patients/{world['pid']}/allergies", {
        "allergen_code": "LATEX", "reaction": "Hives", "severity": "moderate"},
        content_type=J).json()["allergies"][0]["allergy_id"]
    chart = world["doc"].get(world["base"]).content.decode()
    remove_url = f"{world['base']}allergies/{aid}/remove/"
    assert f'href="{remove_url}"' in chart
    assert f'href="{remove_url}"' not in world["nurse"].get(world["base"]).content.decode()
    assert world["nurse"].get(remove_url).status_code == 403
    confirm = world["doc"].get(remove_url)
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "Latex" in html and "Hives" in html
    assert 'id="patient-banner"' in html and 'value="entered-in-error"' in html
    before = his_store.count()
    no_reason = world["doc"].post(remove_url, {"etag": confirm.context["form"].initial["etag"]})
    assert no_reason.status_code == 200 and no_reason.context["form"].errors["reason"]
    other = world["doc"].post(remove_url, {"reason": "other", "detail": "",
                                           "etag": confirm.context["form"].initial["etag"]})
    assert other.context["form"].errors["detail"]
    assert his_store.count() == before
    done = world["doc"].post(remove_url, {"reason": "other", "detail": "Tested: tolerates latex",
                                          "etag": confirm.context["form"].initial["etag"]},
                             follow=True)
    page = done.content.decode()
    assert "Allergy to Latex removed." in page
    assert "Allergies not yet asked" in page  # removing the only allergy is not "none known"
    assert 'id="removed-allergies"' in page and "Other: Tested: tolerates latex" in page
    assert "Allergy to Latex removed: other (Tested: tolerates latex)" in page  # audit line
    gone = world["doc"].post(remove_url, {"reason": "resolved", "etag": "x"}, follow=True)
    assert "not on the record" in gone.content.decode()


def test_the_banner_is_on_every_patient_page(world: dict, make_user) -> None:
    api = world["api"]
    api.post(f"/api/v1/patients/{world['pid']}/allergies", {
        "allergen_code": "PENICILLINS", "reaction": "Anaphylaxis", "severity": "severe"},
        content_type=J)
    api.post(f"/api/v1/patients/{world['pid']}/allergies", {
        "substance": "Sticking plaster", "severity": "mild"}, content_type=J)
    everyone = Client()
    everyone.force_login(make_user("all-roles-b", "clerk", "clinician", "nurse"))
    for path in ("", "demographics/", "allergies/add/", "transfer/",
                 "orders/new/medication/", "orders/new/lab/", "orders/new/imaging/"):
        html = everyone.get(world["base"] + path).content.decode()
        banner = html[html.index('id="patient-banner"'):html.index("</section>",
                                                                  html.index('id="patient-banner"'))]
        assert "BANNER, Rosa" in banner and "BAN001" in banner, path
        assert "Medical Ward 1" in banner and "M104" in banner, path  # names, not codes
        assert re.search(r"\b\d+ y\b", banner) and "female" in banner
        assert 'pb-badge pb-severe' in banner and "Penicillins" in banner, path
        assert "Sticking plaster" in banner
        assert banner.index("Penicillins") < banner.index("Sticking plaster")  # severe first
        assert html.index('id="patient-banner"') < html.index("<form", html.index(
            'id="content-main"')) or path == "", path
