"""The results form on the chart: one field per analyte, errors on the fields, the Results
section with flags in words, acknowledging."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.web.fixed_clock import names_utc

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def lab(api_client, make_user, reference_data) -> dict[str, str]:
    clerk, doc = api_client("clerk"), api_client("clinician")
    pid = clerk.post("/api/v1/patients", {"given_name": "Pia", "family_name": "Page",
                                          "birth_date": "1970-01-01"}, content_type=J).json()["id"]
    clerk.post(f"/api/v1/patients/{pid}/admissions", {"department_id": "MED",
               "ward_id": "MED-1", "reason": "x"}, content_type=J)
    order = doc.post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "CBC"},
                     content_type=J).json()
    doc.post(f"/api/v1/patients/{pid}/orders/{order['order_id']}/start", {}, content_type=J)
    return {"pid": pid, "oid": order["order_id"]}


def _login(make_user, name: str, role: str) -> Client:
    client = Client()
    client.force_login(make_user(name, role))
    return client


def test_the_chart_opens_the_results_form_with_a_field_per_analyte(make_user, lab) -> None:
    nurse = _login(make_user, "ward-nurse", "nurse")
    chart = nurse.get(f"/admin/patients/{lab['pid']}/").content.decode()
    url = f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/results/"
    assert url in chart and "Enter results" in chart
    page = nurse.get(url).content.decode()
    assert 'id="patient-banner"' in page and "PAGE, Pia" in page
    for name in ("results.HGB", "results.WBC", "results.PLT"):
        assert f'name="{name}"' in page
    assert "Haemoglobin (g/L)" in page and "Reference range 130–175 g/L" in page


def test_missing_values_stay_on_the_form_and_complete_nothing(make_user, lab) -> None:
    nurse = _login(make_user, "ward-nurse", "nurse")
    url = f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/results/"
    etag = nurse.get(url).context["form"].initial["etag"]
    r = nurse.post(url, {"results.HGB": "120", "etag": etag})
    assert r.status_code == 200
    assert "Enter the white cell count value." in r.content.decode()
    done = nurse.post(url, {"results.HGB": "120", "results.WBC": "7", "results.PLT": "500",
                            "etag": etag})
    assert done.status_code == 302
    chart = nurse.get(done["Location"]).content.decode()
    assert 'id="results"' in chart
    assert "L ↓ low" in chart and "H ↑ high" in chart
    assert "Not yet acknowledged" in chart  # nurses do not acknowledge


def test_a_clinician_acknowledges_from_the_chart(make_user, lab) -> None:
    nurse, doc = _login(make_user, "n2", "nurse"), _login(make_user, "d2", "clinician")
    url = f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/results/"
    etag = nurse.get(url).context["form"].initial["etag"]
    nurse.post(url, {"results.HGB": "140", "results.WBC": "7", "results.PLT": "200",
                     "etag": etag})
    chart = doc.get(f"/admin/patients/{lab['pid']}/").content.decode()
    assert f"/orders/{lab['oid']}/acknowledge/" in chart
    r = doc.post(f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/acknowledge/", {})
    assert r.status_code == 302
    assert "Acknowledged by d2" in doc.get(r["Location"]).content.decode()


def test_results_show_beside_other_orders_and_a_stale_form_is_reshown(
        api_client, make_user, lab) -> None:
    doc = _login(make_user, "d3", "clinician")
    placed = api_client("clinician").post(f"/api/v1/patients/{lab['pid']}/orders", {
        "kind": "imaging", "modality": "CR", "body_part": "CHEST"}, content_type=J)
    assert placed.status_code == 201  # an order without results on the same chart
    nurse = _login(make_user, "n3", "nurse")
    url = f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/results/"
    etag = nurse.get(url).context["form"].initial["etag"]
    values = {"results.HGB": "140", "results.WBC": "7", "results.PLT": "200"}
    nurse.post(f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/action/",
               {"action": "assign", "etag": etag})  # the order changes meanwhile
    stale = nurse.post(url, {**values, "etag": etag})
    assert stale.status_code == 200 and "changed by someone else" in stale.content.decode()
    fresh = stale.context["form"].data["etag"]
    assert fresh != etag
    assert nurse.post(url, {**values, "etag": fresh}).status_code == 302
    chart = doc.get(f"/admin/patients/{lab['pid']}/").content.decode()
    assert "Haemoglobin" in chart and "No results." not in chart


def test_results_read_in_words_with_their_precision_on_the_chart_and_order_page(
        make_user, lab) -> None:
    nurse = _login(make_user, "ward-nurse", "nurse")
    url = f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/results/"
    etag = nurse.get(url).context["form"].initial["etag"]
    done = nurse.post(url, {"results.HGB": "120.0", "results.WBC": "5.0",
                            "results.PLT": "450", "etag": etag})
    assert done.status_code == 302
    summary = "<strong>Abnormal:</strong> Platelets 450 ×10⁹/L, high; Haemoglobin 120.0 g/L, low"
    for page in (f"/admin/patients/{lab['pid']}/",
                 f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/"):
        html = nurse.get(page).content.decode()
        assert summary in html, page
        assert '<td class="result-value">5.0</td>' in html  # not "5"
        assert '<td class="result-value">120.0</td>' in html
        assert not names_utc(html) and "resulted 20" not in html  # local time, in words


def test_a_measurement_takes_a_decimal_comma_and_refuses_a_group_separator(
        make_user, api_client, lab) -> None:
    nurse = _login(make_user, "ward-nurse", "nurse")
    url = f"/admin/patients/{lab['pid']}/orders/{lab['oid']}/results/"
    page = nurse.get(url)
    field = page.content.decode()
    assert 'name="results.WBC"' in field and 'inputmode="decimal"' in field
    assert 'type="number"' not in field
    etag = page.context["form"].initial["etag"]
    refused = nurse.post(url, {"results.HGB": "120", "results.WBC": "1 000",
                               "results.PLT": "250", "etag": etag})
    assert refused.status_code == 200
    assert "without spaces" in refused.content.decode()
    assert 'value="1 000"' in refused.content.decode()  # kept as typed
    done = nurse.post(url, {"results.HGB": "120", "results.WBC": "7,5", "results.PLT": "250,",
                            "etag": etag})
    assert done.status_code == 302
    results = api_client("clinician").get(f"/api/v1/patients/{lab['pid']}/results").json()
    values = {v["analyte"]: v["value"] for r in results for v in r["values"]}
    assert (values["WBC"], values["PLT"]) == (7.5, 250)
