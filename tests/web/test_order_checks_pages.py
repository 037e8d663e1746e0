"""Order forms: nothing clinical preselected, a refused order comes back as the same form with
a warning and a reason field per failed check, the reasons place it, the chart shows them."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases

pytestmark = pytest.mark.django_db
AMOX = {"medication_code": "AMOX", "dose": "500", "unit": "mg", "route": "PO",
        "frequency": "Q8H", "first_dose": "next", "urgency": "routine", "note": ""}


@pytest.fixture
def patient(his_store, reference_data) -> str:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Pen", "Allergic", date(1950, 1, 1)), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.add_allergy(use_cases.AddAllergy(pid, "Penicillin", "anaphylaxis", "severe"),
                          UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return pid


@pytest.fixture
def doctor(make_user) -> Client:
    client = Client()
    client.force_login(make_user("doctor", "clinician"))
    return client


def url(pid: str, kind: str = "medication") -> str:
    return f"/admin/patients/{pid}/orders/new/{kind}/"


def selected(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, name
    return re.findall(r'<option value="([^"]*)"[^>]*selected', select.group(1))


@pytest.mark.parametrize(("kind", "fields"), [
    ("medication", ("medication_code", "unit", "route", "frequency")),
    ("imaging", ("modality", "body_part")), ("lab", ("test_code",))])
def test_order_forms_start_with_nothing_clinical_chosen(doctor, patient, kind, fields) -> None:
    html = doctor.get(url(patient, kind)).content.decode()
    for name in fields:
        assert re.search(rf'<select name="{name}"[^>]*required', html), name
        assert selected(html, name) in ([], [""]), name
        assert re.search(rf'<select name="{name}"[^>]*>\s*<option value=""[^>]*>— choose —',
                         html), name


def test_a_blank_choice_is_required(doctor, patient, his_store) -> None:
    before = his_store.count()
    r = doctor.post(url(patient), {**AMOX, "route": ""})
    assert r.status_code == 200
    assert r.context["form"].errors["route"] == ["This field is required."]
    assert his_store.count() == before


def test_the_medication_script_and_its_data_come_from_this_app(doctor, patient) -> None:
    html = doctor.get(url(patient)).content.decode()
    assert re.search(r'<script src="/static/patients/order_form\.js"', html)
    assert 'id="medication-hints"' in html and '"doseUnit": "mg"' in html
    assert not re.search(r'src="(https?:)?//', html)  # nothing from another host
    assert doctor.get("/static/patients/order_form.js").status_code == 200


def test_a_refused_order_comes_back_with_warnings_and_reason_fields(doctor, patient,
                                                                   his_store) -> None:
    before = his_store.count()
    r = doctor.post(url(patient), AMOX)
    assert r.status_code == 200  # the same form, not an error page
    html = r.content.decode()
    assert 'id="order-warnings"' in html and "anaphylaxis" in html
    assert re.search(r'<textarea name="override_allergy_conflict"[^>]*required', html)
    assert selected(html, "medication_code") == ["AMOX"]  # the order as entered
    assert his_store.count() == before
    signature = r.context["overrides"]["signature"].value()

    blank = doctor.post(url(patient), {**AMOX, "signature": signature,
                                       "override_allergy_conflict": " "})
    assert blank.status_code == 200
    assert "Give a reason to override" in blank.content.decode()

    placed = doctor.post(url(patient), {**AMOX, "signature": signature,
                                        "override_allergy_conflict": "Tolerated it in 2024"})
    assert placed.status_code == 302
    chart = doctor.get(placed["Location"]).content.decode()
    assert "Overrode the allergy check" in chart and "Tolerated it in 2024" in chart
    assert "overrode the allergy check: Tolerated it in 2024" in chart  # the audit trail


def test_a_reason_does_not_carry_over_to_a_changed_order(doctor, patient) -> None:
    r = doctor.post(url(patient), AMOX)
    signature = r.context["overrides"]["signature"].value()
    changed = {**AMOX, "medication_code": "COAMOX", "dose": "625"}  # also a penicillin
    again = doctor.post(url(patient), {**changed, "signature": signature,
                                       "override_allergy_conflict": "Tolerated amoxicillin"})
    assert again.status_code == 200
    html = again.content.decode()
    assert "Co-amoxiclav" in html and 'id="order-warnings"' in html
    assert "Tolerated amoxicillin" not in html  # asked afresh


def test_a_second_check_needs_its_own_reason(doctor, patient) -> None:
    first = doctor.post(url(patient), AMOX)
    signature = first.context["overrides"]["signature"].value()
    assert doctor.post(url(patient), {**AMOX, "signature": signature,
                                      "override_allergy_conflict": "Desensitised in clinic"}
                       ).status_code == 302
    again = doctor.post(url(patient), {**AMOX, "signature": signature,
                                       "override_allergy_conflict": "Desensitised in clinic"})
    assert again.status_code == 200
    html = again.content.decode()
    assert 'name="override_duplicate_order"' in html
    assert "Already ordered on this admission" in html


def test_cancelling_an_order_still_needs_a_reason(doctor, patient, his_store) -> None:
    order = use_cases.place_order(use_cases.PlaceOrder(patient_id=patient, kind="lab",
                                                       test_code="CBC"),
                                  UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    chart = f"/admin/patients/{patient}/"
    url = f"/admin/patients/{patient}/orders/{order.order_id}/action/"
    asked = doctor.post(url, {"action": "cancel", "reason": ""})  # the confirmation page
    assert 'id="order-cancel"' in asked.content.decode()
    etag = asked.context["form"].initial["etag"]
    refused = doctor.post(url, {"action": "cancel", "reason": " ", "etag": etag,
                                "confirm": "1"})
    assert "Give a reason for cancelling." in refused.content.decode()
    assert 'data-status="created"' in doctor.get(chart).content.decode()


def test_a_reason_too_short_is_refused_on_its_field(doctor, patient, his_store) -> None:
    first = doctor.post(url(patient), AMOX)
    signature = first.context["overrides"]["signature"].value()
    before = his_store.count()
    short = doctor.post(url(patient), {**AMOX, "signature": signature,
                                       "override_allergy_conflict": "x"})
    assert short.status_code == 200 and his_store.count() == before
    errors = short.context["overrides"].errors["override_allergy_conflict"]
    assert "at least 10 characters and 2 words" in errors[0]


@pytest.fixture
def never_asked(his_store, reference_data) -> str:
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Una", "Unasked", date(1950, 1, 1)), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Collapse"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return pid


def test_prescribing_before_allergies_are_asked_offers_to_record_them_first(
        doctor, never_asked) -> None:
    r = doctor.post(url(never_asked), AMOX)
    html = r.content.decode()
    assert 'data-check="allergy-status-unknown"' in html
    assert f'href="/admin/patients/{never_asked}/allergies/add/"' in html
    assert f'href="/admin/patients/{never_asked}/allergies/none/"' in html
    signature = r.context["overrides"]["signature"].value()
    placed = doctor.post(url(never_asked), {
        **AMOX, "signature": signature,
        "override_allergy_status_unknown": "Unconscious on arrival, no relatives"})
    assert placed.status_code == 302
