"""The medication record by shift (the shift on now first, with a fixed clock) and its print
view for downtime: no navigation, the patient banner as the header of every printed sheet.
The browser check emulates print media and takes screenshots at 1024 and 1440 px into
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import datetime, time
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.inputs import hospital_today
from patients import use_cases
from patients.pages import mar_shifts
from patients.persistence import reference
from tests.web.fixed_clock import names_utc
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

LONDON = ZoneInfo("Europe/London")


@pytest.fixture
def ward(his_store, reference_data, settings: Any, monkeypatch) -> dict[str, Any]:
    """A patient on TDS paracetamol (08:00, 14:00, 20:00 local) from today's midnight, the
    clock fixed at 21:10 today in London (the night shift)."""
    settings.HOSPITAL_TIME_ZONE = "Europe/London"
    settings.WARD_DAY_SHIFT = "07:30-19:30"
    today = hospital_today()
    monkeypatch.setattr(mar_shifts, "local_now",
                        lambda: datetime.combine(today, time(21, 10), tzinfo=LONDON))
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Shira", "Shift", datetime(1950, 5, 5).date(), sex="female"), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia",
                                                   bed="M107"),
                            UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    midnight = datetime.combine(today, time(0, 0), tzinfo=LONDON)
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", route="PO", medication_code="PARA",
        dose=Decimal("1000"), unit="mg", frequency="TDS", start_at=midnight.isoformat()),
        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"),
                             UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    return {"pid": pid, "oid": order.order_id}


def _nurse(make_user) -> Client:
    client = Client()
    client.force_login(make_user("rn-shift", "nurse"))
    return client


@pytest.mark.django_db
def test_the_mar_shows_the_shift_on_now_first(ward, make_user) -> None:
    html = _nurse(make_user).get(f"/admin/patients/{ward['pid']}/mar/").content.decode()
    order = [html.find(f'data-shift="{k}"') for k in ("night", "night-before", "day")]
    assert -1 not in order and order == sorted(order), order
    night = html[order[0]:order[1]]
    assert "current shift" in night and ">20:00<" in night and ">08:00<" not in night
    day = html[order[2]:]
    assert ">08:00<" in day and ">14:00<" in day and "current shift" not in day
    assert "day shift 07:00–19:00" in html and not names_utc(html)  # Medical Ward 1's hours
    assert f"/admin/patients/{ward['pid']}/mar/print/" in html


@pytest.mark.django_db
def test_the_shifts_are_the_patients_wards_and_the_setting_when_not_admitted(
        ward, make_user, his_store, monkeypatch) -> None:
    wards = reference.all_of(his_store, "Ward")
    later = {**wards, "MED-1": {**wards["MED-1"], "dayShiftStart": "08:00",
                                "nightShiftStart": "20:00"}}
    read = reference.all_of
    monkeypatch.setattr(mar_shifts.reference, "all_of",
                        lambda store, t: later if t == "Ward" else read(store, t))
    nurse = _nurse(make_user)
    html = nurse.get(f"/admin/patients/{ward['pid']}/mar/").content.decode()
    assert "day shift 08:00–20:00" in html
    printed = nurse.get(f"/admin/patients/{ward['pid']}/mar/print/").content.decode()
    assert "08:00–20:00" in printed
    home = use_cases.register_patient(use_cases.RegisterPatient(
        "Otto", "Outpatient", datetime(1960, 1, 1).date()), UnitOfWork(his_store),
        actor=SYSTEM_ACTOR).patient_id
    assert "day shift 07:30–19:30" in nurse.get(f"/admin/patients/{home}/mar/").content.decode()


@pytest.mark.django_db
def test_the_print_view_has_the_banner_as_every_sheets_header_and_no_navigation(
        ward, make_user) -> None:
    page = _nurse(make_user).get(f"/admin/patients/{ward['pid']}/mar/print/")
    assert page.status_code == 200
    html = page.content.decode()
    head = html[html.find("<thead>"):html.find("</thead>")]
    assert "SHIFT, Shira" in head and "Born 5 May 1950" in head and "No known allergies" in head
    assert "Medication record for" in head and "bed M107" in head
    assert 'id="nav-sidebar"' not in html and "breadcrumbs" not in html
    assert "hisadmin/mar-print.css" in html and "<script>" not in html
    shifts = [html.find(f'data-shift="{k}"') for k in ("night", "night-before", "day")]
    assert -1 not in shifts and shifts == sorted(shifts)
    assert "Given at ______ by ______" in html and not names_utc(html)
    assert _nurse(make_user).get(f"/admin/patients/{ward['pid']}/mar/print/",
                                 {"date": "2026-13-01"}).status_code == 400
    assert Client().get(f"/admin/patients/{ward['pid']}/mar/print/").status_code == 302


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_print_view_prints_and_the_mar_fits(live_server, browser, make_user,  # noqa: F811
                                                ward, shots) -> None:
    make_user("nurse", "nurse")
    base = live_server.url
    for width in (1024, 1440):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        page = ctx.new_page()
        login(page, base, "nurse")
        page.goto(f"{base}/admin/patients/{ward['pid']}/mar/")
        assert page.locator(".mar-shift").first.get_attribute("data-shift") == "night"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(shots / f"mar-by-shift-{width}.png"), full_page=True)
        if width == 1024:
            page.goto(f"{base}/admin/patients/{ward['pid']}/mar/print/")
            expect(page.locator("#print-now")).to_be_visible()
            page.emulate_media(media="print")
            assert not page.is_visible("#print-now")  # the tools are for the screen only
            expect(page.locator("#print-banner")).to_be_visible()
            page.screenshot(path=str(shots / "mar-print-1024.png"), full_page=True)
            page.pdf(path=str(shots / "mar-print.pdf"), format="A4", landscape=True)
        ctx.close()
