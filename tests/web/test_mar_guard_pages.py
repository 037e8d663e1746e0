"""The MAR's Record form with the guards: each warning with its own reason box, a reason
too short refused on its field, good reasons record the dose and the cell shows them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from hisadmin.core.inputs import hospital_time_zone

pytestmark = pytest.mark.django_db
J = "application/json"
GOOD = "Patient leaving for theatre, agreed with the ward doctor"


@pytest.fixture
def nurse(make_user) -> Client:
    client = Client()
    client.force_login(make_user("nurse-guard", "nurse"))
    return client


def _order(team, pid: str) -> str:
    placed = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
        "route": "PO", "frequency": "Q6H"}, content_type=J)
    assert placed.status_code == 201, placed.content
    oid = placed.json()["order_id"]
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{oid}/ready",
                              content_type=J).status_code == 200
    return oid


def _later_slot(team, pid: str, oid: str) -> str:
    """A dose time more than two hours away (today or tomorrow, hospital time)."""
    today = datetime.now(hospital_time_zone()).date()
    for day in (today, today + timedelta(days=1)):
        mar = team["nurse"].get(f"/api/v1/patients/{pid}/mar?date={day.isoformat()}").json()
        for order in mar["orders"]:
            for slot in order["slots"] if order["order_id"] == oid else []:
                if datetime.fromisoformat(slot["scheduled_for"]) > datetime.now(UTC) + \
                        timedelta(hours=2):
                    return slot["slot_id"]
    raise AssertionError("no later dose time")


def test_an_early_dose_shows_its_warning_and_needs_a_real_reason(team, admit, nurse) -> None:
    pid = admit("Early")
    oid = _order(team, pid)
    slot = _later_slot(team, pid, oid)
    url = f"/admin/patients/{pid}/mar/{oid}/record/?slot={slot}"
    form = nurse.get(url).context["form"]
    fields = {"status": "given", "dose": "1000", "unit": "mg",
              "administered_at": form.initial["administered_at"].strftime("%Y-%m-%dT%H:%M"),
              "slot_id": slot, "etag": form.initial["etag"], "reason": "", "note": ""}
    warned = nurse.post(url, fields)
    assert warned.status_code == 200
    html = warned.content.decode()
    assert 'id="guard-warnings"' in html and 'data-check="early-dose"' in html
    assert 'name="override_early_dose"' in html
    signature = warned.context["guards"]["signature"].value()
    short = nurse.post(url, {**fields, "signature": signature, "override_early_dose": "x"})
    assert "at least 10 characters" in short.content.decode()
    done = nurse.post(url, {**fields, "signature": signature, "override_early_dose": GOOD})
    assert done.status_code == 302, done.content.decode()[:2000]
    page = nurse.get(done["Location"]).content.decode()
    assert "Early dose overridden by" in page and GOOD in page
