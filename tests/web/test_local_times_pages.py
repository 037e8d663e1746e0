"""Every page shows dates and times in the hospital's time, in words: no ISO timestamp and
no "UTC" in the text of the chart, the order page, the MAR and its print view, the access
log, the bed board and the worklists (attributes and hidden inputs may keep ISO values)."""

from __future__ import annotations

import re
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.inputs import hospital_today
from patients import use_cases
from patients.domain.results import GivenValue

pytestmark = pytest.mark.django_db
LONDON = ZoneInfo("Europe/London")
ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2})?")


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no tags, attributes, scripts or styles."""
    html = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", html)
    html = re.sub(r"(?s)<select\b.*?</select>", " ", html)  # options are form values
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture
def record(his_store, reference_data, settings: Any, drain_worklists) -> dict[str, str]:
    settings.HOSPITAL_TIME_ZONE = "Europe/London"
    uow = lambda: UnitOfWork(his_store)  # noqa: E731
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Tilda", "Clock", date(1961, 2, 3), sex="female"), uow(), actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Falls", bed="M108"),
                            uow(), actor=SYSTEM_ACTOR)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid), uow(),
                                        actor=SYSTEM_ACTOR)
    med = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", route="PO", medication_code="PARA",
        dose=Decimal("1000"), unit="mg", frequency="TDS",
        start_at=datetime.combine(hospital_today(), time(0, 0), tzinfo=LONDON).isoformat()),
        uow(), actor=SYSTEM_ACTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, med.order_id, "ready"), uow(),
                             actor=SYSTEM_ACTOR)
    lab = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="lab", test_code="BMP"), uow(), actor=SYSTEM_ACTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, lab.order_id, "start"), uow(),
                             actor=SYSTEM_ACTOR)
    values = {"NA": "128", "K": "5.0", "CREAT": "80", "UREA": "9.0", "GLU": "5.5"}
    use_cases.complete_order(use_cases.CompleteOrder(
        pid, lab.order_id, tuple(GivenValue(c, Decimal(v)) for c, v in values.items())),
        uow(), actor=SYSTEM_ACTOR)
    drain_worklists()
    return {"pid": pid, "med": med.order_id, "lab": lab.order_id}


def test_no_page_shows_an_iso_timestamp_or_utc(record, make_user) -> None:
    pid = record["pid"]
    pages = [f"/admin/patients/{pid}/", f"/admin/patients/{pid}/orders/{record['med']}/",
             f"/admin/patients/{pid}/orders/{record['lab']}/", f"/admin/patients/{pid}/mar/",
             f"/admin/patients/{pid}/mar/print/", "/admin/wards/MED-1/",
             "/admin/worklists/admitted/?department=MED", "/admin/worklists/orders/?department=MED",
             "/admin/worklists/medications-due/?ward=MED-1"]
    nurse = Client()
    nurse.force_login(make_user("rn-clock", "nurse"))
    admin = Client()
    admin.force_login(make_user("ad-clock", "admin"))
    for client, url in [(nurse, u) for u in pages] + [(admin, f"/admin/patients/{pid}/access/")]:
        page = client.get(url)
        assert page.status_code == 200, url
        text = visible_text(page.content.decode())
        found = [text[max(0, m.start() - 80):m.end() + 10] for m in ISO.finditer(text)]
        assert not found, (url, found[:3])
        assert "UTC" not in text, url


def test_the_chart_and_the_order_show_the_results_in_words(record, make_user) -> None:
    nurse = Client()
    nurse.force_login(make_user("rn-words", "nurse"))
    for url in (f"/admin/patients/{record['pid']}/",
                f"/admin/patients/{record['pid']}/orders/{record['lab']}/"):
        text = " ".join(visible_text(nurse.get(url).content.decode()).split())
        assert "Abnormal: Urea 9.0 mmol/L, high; Sodium 128 mmol/L, low" in text, url
        assert "Potassium 5.0 mmol/L" in text
