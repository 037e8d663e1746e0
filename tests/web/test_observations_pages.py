"""Observations on pages: the bedside form records a set (decimal comma, the hospital's
time), the chart shows the latest score and the table, escalation and scale 2 forms."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
FULL = {"respiration_rate": "26", "spo2": "93", "on_oxygen": "air", "systolic_bp": "118",
        "diastolic_bp": "70", "pulse": "88", "consciousness": "A", "temperature": "37,2",
        "taken_at": "2026-11-28T07:30"}


@pytest.fixture
def nurse(make_user) -> Client:
    client = Client()
    client.force_login(make_user("ward-nurse", "nurse"))
    return client


def test_the_form_records_a_set_and_the_chart_shows_it(admit, nurse) -> None:
    pid = admit("Charted", bed="M105")
    form = nurse.get(f"/admin/patients/{pid}/observations/new/")
    assert form.status_code == 200
    page = form.content.decode()
    assert "data-news2=" in page and "patients/news2.js" in page
    order = [m for m in re.findall(r'name="(\w+)"', page) if m in FULL]
    assert order == ["respiration_rate", "spo2", "on_oxygen", "systolic_bp", "diastolic_bp",
                     "pulse", "consciousness", "temperature", "taken_at"]
    saved = nurse.post(f"/admin/patients/{pid}/observations/new/", FULL, follow=True)
    text = saved.content.decode()
    assert "NEWS2 5, medium risk" in text  # RR 26 → 3, SpO2 93 → 2
    assert 'id="obs-table"' in text and "Not escalated" in text
    assert 'id="escalate"' in text


def test_an_impossible_value_stays_on_the_form_with_its_error(admit, nurse) -> None:
    pid = admit("Mistyped")
    r = nurse.post(f"/admin/patients/{pid}/observations/new/", {**FULL, "spo2": "190"})
    assert r.status_code == 200
    text = r.content.decode()
    assert "SpO2 of 190" in text and 'value="190"' in text  # what was typed is kept


def test_a_wrong_wristband_records_nothing(admit, nurse) -> None:
    pid = admit("Banded")
    r = nurse.post(f"/admin/patients/{pid}/observations/new/", {**FULL, "scanned_id": "X999"})
    assert r.status_code == 200 and "not this patient" in r.content.decode().lower()
    chart = nurse.get(f"/admin/patients/{pid}/").content.decode()
    assert "No observations recorded yet" in chart


def test_escalation_clears_not_escalated(admit, nurse) -> None:
    pid = admit("Told")
    nurse.post(f"/admin/patients/{pid}/observations/new/", FULL)
    chart = nurse.get(f"/admin/patients/{pid}/").content.decode()
    link = re.search(r'id="escalate" href="([^"]+)"', chart).group(1)
    done = nurse.post(link, {"told_whom": "Dr Patel, registrar", "response": "plan",
                             "detail": "Fluids", "told_at": "2026-11-28T07:40"}, follow=True)
    text = done.content.decode()
    assert "Escalated to Dr Patel, registrar" in text and "Not escalated" not in text


def test_only_a_clinician_sees_and_decides_scale_2(admit, nurse, make_user) -> None:
    pid = admit("Scaled")
    assert 'id="spo2-scale"' not in nurse.get(f"/admin/patients/{pid}/").content.decode()
    doctor = Client()
    doctor.force_login(make_user("ward-doctor", "clinician"))
    assert 'id="spo2-scale"' in doctor.get(f"/admin/patients/{pid}/").content.decode()
    done = doctor.post(f"/admin/patients/{pid}/spo2-scale/",
                       {"reason": "Hypercapnic failure, target 88-92 %"}, follow=True)
    assert "scale 2</strong> (target 88–92 %)" in done.content.decode()
    form = nurse.get(f"/admin/patients/{pid}/observations/new/").content.decode()
    assert "<strong>scale 2</strong>" in form


def test_the_stays_chart_draws_every_set_a_day_a_strip_with_a_table_and_a_print_view(
        admit, nurse, team) -> None:
    pid = admit("Plotted", bed="M106")
    for hour in range(30):  # 30 hourly sets: two strips
        values = {"respiration_rate": 14 + hour % 12, "spo2": 96, "on_oxygen": hour % 5 == 0,
                  "systolic_bp": 120, "pulse": 70 + hour, "consciousness": "A",
                  "temperature": 37.0}
        r = team["nurse"].post(f"/api/v1/patients/{pid}/observations", {
            **values, "taken_at": f"2026-11-{26 + hour // 24:02d}T{hour % 24:02d}:00:00+00:00"},
            content_type="application/json")
        assert r.status_code == 201, r.content
    page = nurse.get(f"/admin/patients/{pid}/observations/chart/").content.decode()
    assert page.count('class="obs-svg"') == 2 and page.count('<rect x=') == 30 * 8
    assert "#ffb3b3" in page  # a 3 is red: respiration rate 25
    assert "O2</text>" in page  # oxygen written, not only coloured
    assert page.count("<tr><th scope=\"row\">") == 30  # the table: every set
    printed = nurse.get(f"/admin/patients/{pid}/observations/chart/?print=1").content.decode()
    assert "<svg" in printed and 'id="print-now"' in printed and "nav-sidebar" not in printed
