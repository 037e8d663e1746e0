"""The "Medication record" page: the day's grid with statuses by name, Record on open slots
for nurses only, the small form (given, not given with a reason, the PRN interval answered
with a reason), previous / next day, the banner."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def world(api_client, make_user, reference_data) -> dict:
    clerk, doc_api, nurse_api = api_client("clerk"), api_client("clinician"), api_client(
        "nurse")
    pid = clerk.post("/api/v1/patients", {"given_name": "Max", "family_name": "Dose",
                                          "birth_date": "1948-04-04", "mrn": "MAR001"},
                     content_type=J).json()["id"]
    clerk.post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M105", "reason": "Sepsis"},
        content_type=J)
    # the allergies asked, so a medication order is not allergy-status-unknown
    assert doc_api.post(f"/api/v1/patients/{pid}/allergies/none",
                        content_type=J).status_code in (200, 201)
    now = datetime.now(UTC)
    start = datetime(now.year, now.month, now.day, tzinfo=UTC)
    orders = {}
    for name, body in {
        "amox": {"medication_code": "AMOX", "dose": "1", "unit": "g", "route": "PO",
                 "frequency": "Q8H", "start_at": start.isoformat(), "first_dose": "now"},
        "para": {"medication_code": "PARA", "dose": "1000", "unit": "mg", "route": "PO",
                 "frequency": "Q6H", "as_needed": True},
    }.items():
        oid = doc_api.post(f"/api/v1/patients/{pid}/orders", {"kind": "medication", **body},
                           content_type=J).json()["order_id"]
        nurse_api.post(f"/api/v1/patients/{pid}/orders/{oid}/ready", {}, content_type=J)
        orders[name] = oid
    doc, nurse = Client(), Client()
    doc.force_login(make_user("dr-mar", "clinician"))
    nurse.force_login(make_user("rn-mar", "nurse"))
    return {"pid": pid, "doc": doc, "nurse": nurse, "start": start, **orders,
            "base": f"/admin/patients/{pid}/"}


def test_the_grid_shows_each_slot_by_name_and_record_for_nurses(world: dict) -> None:
    page = world["nurse"].get(world["base"] + "mar/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="patient-banner"' in html and "Medication record" in html
    # the first dose at the start (midnight), then Q8H's standard times from 6 hours after
    assert all(f">{t}<" in html for t in ("00:00", "06:00", "14:00", "22:00"))
    assert any(s in html for s in (">Due<", ">Late<", ">Upcoming<"))
    assert 'class="button mar-record"' in html and "Paracetamol" in html
    assert "Previous day" in html and "Next day" in html
    read_only = world["doc"].get(world["base"] + "mar/").content.decode()
    assert 'class="button mar-record"' not in read_only and "Only nurses record" in read_only
    chart = world["nurse"].get(world["base"]).content.decode()
    assert f'href="/admin/patients/{world["pid"]}/mar/"' in chart


def test_record_opens_a_prefilled_form_and_gives_the_dose(world: dict) -> None:
    slot = world["start"].isoformat()
    url = world["base"] + f"mar/{world['amox']}/record/?slot={slot.replace('+', '%2B')}"
    form = world["nurse"].get(url)
    assert form.status_code == 200
    initial = form.context["form"].initial
    assert initial["dose"] == "1" and initial["unit"] == "g" and initial["status"] == "given"
    assert 'id="patient-banner"' in form.content.decode()
    done = world["nurse"].post(url, {**initial, "status": "given", "dose": "1", "unit": "g",
                                     "administered_at": "", "scheduled_for": slot},
                               follow=True)
    html = done.content.decode()
    assert "Dose given recorded: " in html and ">Given<" in html and "1 g at" in html


def start_slot(world: dict) -> str:
    """The Record form of the amoxicillin's first dose time (at its start)."""
    slot = world["start"].isoformat().replace("+", "%2B")
    return world["base"] + f"mar/{world['amox']}/record/?slot={slot}"


def test_not_given_needs_a_reason(world: dict) -> None:
    url = start_slot(world)
    initial = world["nurse"].get(url).context["form"].initial
    missing = world["nurse"].post(url, {**initial, "status": "not_given", "reason": "",
                                        "administered_at": ""})
    assert missing.status_code == 200 and "Say why the dose was not given" in (
        missing.content.decode())
    done = world["nurse"].post(url, {**initial, "status": "not_given", "reason": "refused",
                                     "administered_at": ""}, follow=True)
    assert "Dose not given recorded" in done.content.decode()


def test_too_much_is_refused_on_its_field(world: dict) -> None:
    url = start_slot(world)
    initial = world["nurse"].get(url).context["form"].initial
    r = world["nurse"].post(url, {**initial, "dose": "2", "unit": "g", "administered_at": ""})
    assert r.status_code == 200 and "more than the ordered dose" in r.content.decode()
    assert "dose" in r.context["form"].errors


def test_a_prn_dose_too_soon_asks_for_a_reason_then_records(world: dict) -> None:
    url = world["base"] + f"mar/{world['para']}/record/"
    initial = world["nurse"].get(url).context["form"].initial
    body = {**initial, "dose": "1000", "unit": "mg", "administered_at": ""}
    world["nurse"].post(url, body)
    body["etag"] = world["nurse"].get(url).context["form"].initial["etag"]
    refused = world["nurse"].post(url, body)
    html = refused.content.decode()
    # the dose-interval guard (the PRN interval before it) with its own reason box
    assert "Dose interval" in html and 'name="override_dose_interval"' in html
    assert 'name="signature"' in html
    signature = refused.context["guards"]["signature"].value()
    done = world["nurse"].post(url, {**body, "signature": signature,
                                     "override_dose_interval": "Breakthrough pain"},
                               follow=True)
    page = done.content.decode()
    assert "Dose given recorded: " in page and "interval overridden" in page


def test_clinicians_cannot_open_the_form_and_a_bad_date_is_a_400_page(world: dict) -> None:
    assert world["doc"].get(world["base"] + f"mar/{world['amox']}/record/").status_code == 403
    for bad in ("not-a-day", "0001-01-01", "9999-12-31"):
        r = world["doc"].get(world["base"] + f"mar/?date={bad}")
        page = r.content.decode()
        assert r.status_code == 400, bad
        assert "YYYY-MM-DD" in page or "from 1900-01-01 to 2100-12-31" in page, bad
    yesterday = (world["start"] - timedelta(days=1)).date().isoformat()
    r = world["doc"].get(world["base"] + f"mar/?date={yesterday}")
    assert "No scheduled medication on this day." in r.content.decode()
