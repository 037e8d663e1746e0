"""Bad input on every page: the error sits on its field (or in a message), nothing is written,
and a stale submit shows the current record instead of overwriting it."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
MED = {"medication_code": "PARA", "dose": "1", "unit": "g", "route": "PO", "frequency": "Q8H",
       "first_dose": "next", "urgency": "routine"}


@pytest.fixture
def world(api_client, make_user, reference_data) -> dict:
    clerk, doc = api_client("clerk"), api_client("clinician")
    a = clerk.post("/api/v1/patients", {"given_name": "Ana", "family_name": "Page",
                                        "birth_date": "1980-01-01"}, content_type=J).json()
    b = clerk.post("/api/v1/patients", {"given_name": "Bo", "family_name": "Page",
                                        "birth_date": "1981-01-01"}, content_type=J).json()
    adm = clerk.post(f"/api/v1/patients/{a['id']}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M101", "reason": "x"},
        content_type=J).json()
    # the allergies asked, so a medication order is not allergy-status-unknown
    asked = doc.post(f"/api/v1/patients/{a['id']}/allergies/none", content_type=J)
    assert asked.status_code in (200, 201), asked.content
    med = doc.post(f"/api/v1/patients/{a['id']}/orders", {"kind": "medication", **MED},
                   content_type=J).json()
    web = Client()
    web.force_login(make_user("all-roles", "clerk", "clinician", "nurse"))
    return {"web": web, "a": a["id"], "b": b["id"], "a_etag": asked.json()["etag"],
            "adm_etag": adm["etag"], "med": med["order_id"], "med_etag": med["etag"]}


ROOT = "/admin/patients/{a}/"
# (page, form data, field with the error)
FORM_CASES = [
    ("/admin/patients/register/", {"given_name": "X", "family_name": "", "birth_date":
                                   "1980-01-01", "sex": "female"}, "family_name"),
    ("/admin/patients/register/", {"given_name": "X", "family_name": "Y", "birth_date":
                                   "1980-01-01", "sex": "robot"}, "sex"),
    (ROOT + "demographics/", {"given_name": "", "family_name": "P", "birth_date": "1980-01-01",
                              "sex": "female", "etag": "{a_etag}"}, "given_name"),
    (ROOT + "demographics/", {"given_name": "A", "family_name": "P", "birth_date": "2999-01-01",
                              "sex": "female", "etag": "{a_etag}"}, "birth_date"),
    ("/admin/patients/{b}/admit/", {"department_id": "MED", "ward_id": "MED-1", "bed": "M101",
                                    "reason": "x"}, "bed"),
    ("/admin/patients/{b}/admit/", {"department_id": "MED", "ward_id": "MED-1", "bed": "",
                                    "reason": ""}, "reason"),
    ("/admin/patients/{b}/admit/", {"department_id": "MED", "ward_id": "NOPE", "reason": "x"},
     "ward_id"),
    (ROOT + "transfer/", {"ward_id": "MED-2", "bed": "ZZ", "etag": "{adm_etag}"}, "bed"),
    (ROOT + "transfer/", {"ward_id": "MED-1", "bed": "M101", "etag": "{adm_etag}"}, "bed"),
    (ROOT + "allergies/add/", {"substance": "", "severity": "mild", "etag": "{a_etag}"},
     "substance"),
    (ROOT + "allergies/add/", {"substance": "Nuts", "severity": "fatal", "etag": "{a_etag}"},
     "severity"),
    (ROOT + "orders/new/medication/", {**MED, "dose": "0"}, "dose"),
    (ROOT + "orders/new/medication/", {**MED, "dose": "lots"}, "dose"),
    (ROOT + "orders/new/medication/", {**MED, "medication_code": "XX"}, "medication_code"),
    (ROOT + "orders/new/imaging/", {"modality": "CT", "body_part": "TAIL",
                                    "urgency": "stat"}, "body_part"),
    (ROOT + "orders/new/lab/", {"test_code": "", "urgency": "routine"}, "test_code"),
    (ROOT + "orders/{med}/administer/", {"dose": "-1", "unit": "g", "etag": "{med_etag}"},
     "dose"),
    (ROOT + "orders/{med}/administer/", {"dose": "1 000", "unit": "g", "etag": "{med_etag}"},
     "dose"),  # a group separator: refused, never read as another number
    (ROOT + "orders/{med}/administer/", {"dose": "1,500", "unit": "g", "etag": "{med_etag}"},
     "dose"),  # 1.5 or 1500? refused
    (ROOT + "orders/new/medication/", {**MED, "dose": "1,000.5"}, "dose"),
]
# Buttons that post and come back to the chart with a message.
BUTTON_CASES = [
    (ROOT + "discharge/", {"disposition": "moon", "etag": "{adm_etag}"}, "Choose a disposition"),
    ("/admin/patients/{b}/discharge/", {"disposition": "home", "etag": "x"}, "no active"),
    (ROOT + "orders/{med}/action/", {"action": "fly", "etag": "{med_etag}"}, "Unknown action"),
    (ROOT + "orders/{med}/action/", {"action": "complete", "etag": "{med_etag}"}, "cannot be"),
    (ROOT + "orders/{med}/action/", {"action": "cancel", "reason": "", "etag": "{med_etag}"},
     "reason"),
    (ROOT + "allergies/nope/remove/", {"etag": "{a_etag}"}, "not on the record"),
]


def test_it_puts_errors_on_the_fields_and_writes_nothing(world: dict, his_store,
                                                         subtests) -> None:
    web: Client = world["web"]
    for url, data, field in FORM_CASES:
        with subtests.test(msg=f"{url} {field}"):
            before = his_store.count()
            response = web.post(url.format(**world),
                                {k: v.format(**world) for k, v in data.items()})
            assert response.status_code == 200, response.status_code
            errors = response.context["form"].errors
            assert errors.get(field if field else "__all__"), errors
            assert his_store.count() == before
    for url, data, words in BUTTON_CASES:
        with subtests.test(msg=f"{url} {words}"):
            before = his_store.count()
            response = web.post(url.format(**world),
                                {k: v.format(**world) for k, v in data.items()}, follow=True)
            assert response.status_code == 200
            assert words in response.content.decode()
            assert his_store.count() == before


def test_it_shows_the_current_record_after_a_stale_submit(world: dict, his_store,
                                                          api_client) -> None:
    web: Client = world["web"]
    base = f"/admin/patients/{world['a']}/"
    # Someone else records an allergy after our forms were rendered with a_etag.
    api_client("clinician").post(f"/api/v1/patients/{world['a']}/allergies", {
        "substance": "Iodine", "severity": "severe"}, content_type=J)
    before = his_store.count()
    stale = web.post(base + "demographics/", {"given_name": "Ana", "family_name": "Changed",
                                              "birth_date": "1980-01-01", "sex": "female",
                                              "etag": world["a_etag"]})
    page = stale.content.decode()
    assert "changed by someone else meanwhile" in page
    assert 'value="Changed"' in page  # what we typed is kept…
    conflict = stale.context["conflict"]  # …beside what is on record now
    assert {"label": "Family name", "yours": "Changed", "now": "Page"}.items() <= \
        next(r for r in conflict if r["field"] == "family_name").items()
    assert stale.context["form"].data["etag"] != world["a_etag"]  # a resubmit applies it
    assert "Iodine" in page  # the current record is shown next to the form
    assert his_store.count() == before
    allergy = web.post(base + "allergies/add/", {"substance": "Nuts", "severity": "mild",
                                                 "etag": world["a_etag"]})
    assert "changed by someone else meanwhile" in allergy.content.decode()
    fresh_etag = allergy.context["form"].data["etag"]
    assert fresh_etag != world["a_etag"]
    assert his_store.count() == before
    again = web.post(base + "allergies/add/", {"substance": "Nuts", "severity": "mild",
                                               "etag": fresh_etag})
    assert again.status_code == 302  # resubmitting the re-shown form is based on the new version


def test_it_refuses_a_stale_transfer_and_order_button(world: dict, his_store, api_client) -> None:
    web: Client = world["web"]
    base = f"/admin/patients/{world['a']}/"
    api_client("clerk").post(f"/api/v1/patients/{world['a']}/transfer", {"ward_id": "MED-2"},
                             content_type=J)
    api_client("nurse").post(f"/api/v1/patients/{world['a']}/orders/{world['med']}/ready", {},
                             content_type=J)
    before = his_store.count()
    moved = web.post(base + "transfer/", {"ward_id": "CARD-A", "bed": "",
                                          "etag": world["adm_etag"]})
    assert "changed by someone else meanwhile" in moved.content.decode()
    pressed = web.post(base + f"orders/{world['med']}/action/",
                       {"action": "start", "etag": world["med_etag"]}, follow=True)
    assert "changed by someone else meanwhile" in pressed.content.decode()
    assert his_store.count() == before
