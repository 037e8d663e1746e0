"""``manage.py setup_demo``: accounts, reference data and demo patients, idempotently."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from hisadmin.core import keys
from hisadmin.core.inputs import hospital_time_zone
from patients import demo
from patients.domain.shifts import Shift
from patients.persistence import mrn, observations, queries, setup_marks
from patients.use_cases.assignments import read_assignments, shift_hours

pytestmark = [pytest.mark.service, pytest.mark.django_db]


def run() -> str:
    out = StringIO()
    call_command("setup_demo", stdout=out)
    return out.getvalue()


def test_it_sets_up_the_demo_once_and_says_what_it_did(his_store, settings) -> None:
    settings.DEMO_DATA = True
    first = run()
    assert "user clinician (clinician) created" in first
    assert "registered and admitted" in first
    assert User.objects.get(username="admin").is_superuser
    assert User.objects.get(username="nurse").check_password("nurse-demo-2026")
    ids = [mrn.lookup(his_store, demo.demo_mrn(n)) for n in range(1, 13)]
    assert all(ids)
    admitted = [pid for pid in ids if queries.chart(his_store, pid)["active_admission"]]
    wards = {queries.chart(his_store, pid)["active_admission"]["wardId"]
             for pid in admitted}
    assert len(admitted) >= 6 and len(wards) >= 4
    assert any(queries.orders(his_store, pid, active_only=True) for pid in admitted)
    # Something for every worklist a role opens first: an abnormal result to review, a
    # set of observations scored high, the demo nurse's beds this shift, a likely duplicate.
    maria = queries.orders(his_store, ids[0])
    lab = next(o for o in maria if o["kind"] == "lab")
    assert lab["status"] == "completed"
    potassium = next(v for v in lab["results"]["values"] if v["analyte"] == "K")
    assert potassium["flag"] == "H", potassium
    aiko = mrn.lookup(his_store, demo.demo_mrn(3))
    sets, _ = observations.page(his_store, aiko)
    assert [s["news2"]["risk"] for s in sets] == ["high"]
    nurse = User.objects.get(username="nurse")
    sheet = read_assignments(his_store, "MED-1", Shift.at(
        datetime.now(UTC), shift_hours(his_store, "MED-1"), hospital_time_zone()))
    assert {bed: n.nurse_id for bed, n in sheet.assignments.items()} == {
        "M103": str(nurse.pk), "M104": str(nurse.pk)}
    assert "a likely duplicate of DEMO-01" in first
    count = his_store.count()
    second = run()
    assert "demo patients already loaded" in second and "exists" in second
    assert his_store.count() == count


def test_it_resumes_an_interrupted_demo_load_without_duplicates(his_store, settings) -> None:
    settings.DEMO_DATA = True
    run()
    his_store.delete(setup_marks.MARKS_PK, "demo")  # as if the first run died before its marker
    patients_before = his_store.count(keys.patient(mrn.lookup(his_store, demo.demo_mrn(1))))
    assert "patient DEMO-01 exists" in run()
    assert his_store.count(keys.patient(mrn.lookup(his_store, demo.demo_mrn(1)))) == \
        patients_before
