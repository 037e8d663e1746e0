"""One slot per record, on the pages (Django test client, fixed clock in Europe/London): the
chart's Administer closes the MAR slot due and its Medications due row; the MAR's Record
gives a dose or records one not given with its reason; with no dose time due the form asks
which; a second record of a slot is refused with a message on the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.web.fixed_clock import Clock, fixed_clock, slot_of  # noqa: F401

pytestmark = pytest.mark.django_db
J = "application/json"
DAY = "2026-06-10"


@pytest.fixture(autouse=True)
def clock(fixed_clock: Callable[[str, str], Clock]) -> Clock:  # noqa: F811
    """07:50 in London: the TDS order's 08:00 dose is due."""
    return fixed_clock(DAY, "07:50")


@pytest.fixture
def tds(team: dict[str, Client], admit: Callable[..., str]) -> tuple[str, str]:
    """(patient, order): amoxicillin 500 mg PO TDS from 07:50, first dose next, ready."""
    pid = admit("Slotte", given="Ida", bed="M105")
    placed = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "AMOX", "dose": "500", "unit": "mg",
        "route": "PO", "frequency": "TDS", "first_dose": "next"}, content_type=J)
    assert placed.status_code == 201, placed.content
    oid = placed.json()["order_id"]
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{oid}/ready", {},
                              content_type=J).status_code == 200
    return pid, oid


@pytest.fixture
def nurse(make_user: Callable[..., Any]) -> Client:
    client = Client()
    client.force_login(make_user("rn-slot", "nurse"))
    return client


def statuses(team: dict[str, Client], pid: str) -> dict[str, dict[str, Any]]:
    """The day's slots in the API, by slot id."""
    mar = team["nurse"].get(f"/api/v1/patients/{pid}/mar", {"date": DAY})
    assert mar.status_code == 200, mar.content
    return {s["slot_id"]: s for o in mar.json()["orders"] for s in o["slots"]}


def etag(team: dict[str, Client], pid: str, oid: str) -> str:
    return team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()["etag"]


def due_slots(nurse: Client, drain: Callable[[], int]) -> str:
    drain()
    page = nurse.get("/admin/worklists/medications-due/", {"ward": "MED-1"})
    assert page.status_code == 200
    return page.content.decode()


def record(nurse: Client, pid: str, oid: str, slot: str, **fields: str) -> Any:
    """Submit the MAR's Record form for ``slot`` (given now, the ordered dose, by default)."""
    form = {"status": "given", "dose": "500", "unit": "mg", "administered_at": "",
            "reason": "", "reason_detail": "", "note": "", "slot_id": slot, **fields}
    return nurse.post(f"/admin/patients/{pid}/mar/{oid}/record/?slot={slot}", form)


def test_the_charts_administer_closes_the_mar_slot_and_the_medications_due_row(
        team, tds, nurse, drain_worklists) -> None:
    pid, oid = tds
    eight = slot_of(oid, DAY, "08:00")
    assert f"slot={eight}" in due_slots(nurse, drain_worklists)
    sent = nurse.post(f"/admin/patients/{pid}/orders/{oid}/administer/", {
        "dose": "500", "unit": "mg", "note": "", "etag": etag(team, pid, oid)})
    assert sent.status_code == 302, sent.content.decode()[:2000]
    assert statuses(team, pid)[eight]["status"] == "given"
    assert statuses(team, pid)[eight]["administration"]["by"] == "rn-slot"
    grid = nurse.get(f"/admin/patients/{pid}/mar/", {"date": DAY}).content.decode()
    assert f'data-slot-id="{eight}" data-status="given"' in grid
    assert f"record/?slot={eight}" not in grid
    assert f"slot={eight}" not in due_slots(nurse, drain_worklists)


def test_the_mar_records_a_dose_given_and_one_not_given_with_its_reason(
        team, tds, nurse, clock, drain_worklists) -> None:
    pid, oid = tds
    eight, two = slot_of(oid, DAY, "08:00"), slot_of(oid, DAY, "14:00")
    form = nurse.get(f"/admin/patients/{pid}/mar/{oid}/record/", {"slot": eight})
    assert form.status_code == 200 and "Wed 10 Jun, 08:00" in form.content.decode()
    given = record(nurse, pid, oid, eight, etag=etag(team, pid, oid))
    assert given.status_code == 302, given.content.decode()[:2000]
    clock.at("13:55")
    nurse = Client()  # six hours idle end a session: the afternoon's login
    nurse.force_login(User.objects.get(username="rn-slot"))
    bare = record(nurse, pid, oid, two, status="not_given", dose="", unit="",
                  etag=etag(team, pid, oid))
    assert bare.status_code == 200, bare.get("Location")
    assert "Say why the dose was not given" in bare.content.decode()
    assert statuses(team, pid)[two]["status"] == "due"  # nothing saved without a reason
    held = record(nurse, pid, oid, two, status="not_given", dose="", unit="", reason="held",
                  note="Nil by mouth before the scan", etag=etag(team, pid, oid))
    assert held.status_code == 302, held.content.decode()[:2000]
    slots = statuses(team, pid)
    assert slots[eight]["status"] == "given" and slots[two]["status"] == "not_given"
    assert slots[two]["administration"]["reason"] == "held"
    grid = nurse.get(f"/admin/patients/{pid}/mar/", {"date": DAY}).content.decode()
    assert f'data-slot-id="{two}" data-status="not_given"' in grid
    assert f"slot={two}" not in due_slots(nurse, drain_worklists)


def test_with_no_dose_time_due_the_chart_asks_which_and_records_the_one_chosen(
        team, tds, nurse, clock) -> None:
    pid, oid = tds
    clock.at("11:00")  # 08:00 is late, 14:00 upcoming: neither is due at 11:00
    form = {"dose": "500", "unit": "mg", "note": "", "etag": etag(team, pid, oid)}
    asked = nurse.post(f"/admin/patients/{pid}/orders/{oid}/administer/", form)
    html = asked.content.decode()
    assert asked.status_code == 200 and "say which dose time this answers" in html
    eight, two, eve = (slot_of(oid, DAY, t) for t in ("08:00", "14:00", "20:00"))
    for slot in (eight, two, eve):
        assert f'type="radio" name="slot_id" value="{slot}"' in html
    assert all(s["status"] not in ("given", "not_given") for s in statuses(team, pid).values())
    chosen = nurse.post(f"/admin/patients/{pid}/orders/{oid}/administer/",
                        {**form, "slot_id": eight})
    assert chosen.status_code == 302, chosen.content.decode()[:2000]
    slots = statuses(team, pid)
    assert [slots[s]["status"] for s in (eight, two, eve)] == ["given", "upcoming", "upcoming"]


def test_a_second_record_of_the_same_slot_is_refused_with_a_message(
        team, tds, nurse, make_user) -> None:
    pid, oid = tds
    eight = slot_of(oid, DAY, "08:00")
    seen = etag(team, pid, oid)  # two nurses open the form for the same dose
    assert record(nurse, pid, oid, eight, etag=seen).status_code == 302
    other = Client()
    other.force_login(make_user("rn-other", "nurse"))
    again = record(other, pid, oid, eight, etag=etag(team, pid, oid))
    html = again.content.decode()
    assert again.status_code == 200
    assert 'class="errornote"' in html and "is already recorded" in html
    stale = record(other, pid, oid, eight, etag=seen)  # with the form's old version
    assert stale.status_code == 200 and 'class="errornote"' in stale.content.decode()
    entry = statuses(team, pid)[eight]["administration"]
    assert entry["by"] == "rn-slot"
    order = team["nurse"].get(f"/api/v1/patients/{pid}/orders/{oid}").json()
    assert len(order["administrations"]) == 1


def test_the_refusal_names_the_dose_time_as_the_ward_reads_it(team, tds, nurse) -> None:
    pid, oid = tds
    eight = slot_of(oid, DAY, "08:00")
    assert record(nurse, pid, oid, eight, etag=etag(team, pid, oid)).status_code == 302
    html = record(nurse, pid, oid, eight, etag=etag(team, pid, oid)).content.decode()
    assert "is already recorded" in html
    assert "+00:00" not in html and "08:00" in html.split("is already recorded")[0][-80:]
