"""The two clinical worklists fed by the relay: "Medications due" (a ward's open dose times)
and "Results to review" (the ordering clinician's unacknowledged results), through the real
use cases, the real projection (drained) and the API and pages; and check/rebuild. Dose
times are the hospital's standard local times, so the clock is fixed (Europe/London)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from hisadmin.models import ApiToken
from tests.web.fixed_clock import (  # noqa: F401
    Clock,
    fixed_clock,
    london,
    names_utc,
    slot_of,
    utc_text,
)
from worklists.ops import maintenance

pytestmark = pytest.mark.django_db
J = "application/json"
DUE = "/api/v1/worklists/medications-due"
REVIEW = "/api/v1/worklists/results-to-review"
CBC = [{"analyte_code": "HGB", "value": 120}, {"analyte_code": "WBC", "value": "7.5"},
       {"analyte_code": "PLT", "value": 450}]


DAY = "2026-06-10"


@pytest.fixture(autouse=True)
def clock(fixed_clock: Callable[[str, str], Clock]) -> Clock:  # noqa: F811
    """Every test on a fixed clock: 07:50 in London, ten minutes before the 08:00 round
    (first, so every record and token is made on it)."""
    return fixed_clock(DAY, "07:50")


def prescribe(team: dict[str, Client], pid: str, *, frequency: str = "TDS",
              **extra: object) -> str:
    placed = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "AMOX", "dose": "1", "unit": "g",
        "route": "PO", "frequency": frequency, **extra}, content_type=J)
    assert placed.status_code == 201, placed.content
    oid = placed.json()["order_id"]
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{oid}/ready", {},
                              content_type=J).status_code == 200
    return oid


@pytest.fixture
def patient(admit: Callable[..., str]) -> str:
    return admit("Dosey", given="Ada", bed="M103")


def due(team: dict[str, Client], ward: str = "MED-1") -> list[dict]:
    r = team["nurse"].get(DUE, {"ward": ward})
    assert r.status_code == 200, r.content
    return r.json()["items"]


def test_a_dose_due_now_is_listed_for_its_ward_until_a_nurse_answers_it(
        team, patient, drain_worklists) -> None:
    oid = prescribe(team, patient)  # TDS from 07:50, first dose at the next standard time
    drain_worklists()
    [item] = due(team)
    assert item["patient_id"] == patient and item["order_id"] == oid
    assert item["dose_status"] == "due" and item["scheduled_for"] == utc_text(DAY, "08:00")
    assert item["slot_id"] == slot_of(oid, DAY, "08:00")
    assert item["bed"] == "M103" and item["name"] == "DOSEY, Ada"
    assert "Amoxicillin" in item["description"]
    assert due(team, "MED-2") == []
    r = team["nurse"].post(f"/api/v1/patients/{patient}/orders/{oid}/administrations", {
        "status": "given", "dose": "1", "unit": "g", "slot_id": item["slot_id"]},
        content_type=J)
    assert r.status_code == 201, r.content
    drain_worklists()
    assert due(team) == []


def test_late_upcoming_and_as_needed_doses(team, patient, drain_worklists, clock) -> None:
    again = {"overrides": {"duplicate-order": "a separate course on purpose",
                           "dose-limit": "one dose of each course only"}}
    late = prescribe(team, patient)  # its 08:00 dose is late by 10:00
    clock.at("10:00")
    soon = prescribe(team, patient, frequency="ONCE",
                     start_at=london(DAY, "10:45").isoformat(), **again)
    later = prescribe(team, patient, frequency="ONCE",
                      start_at=london(DAY, "13:00").isoformat(), **again)
    prescribe(team, patient, frequency="Q6H", as_needed=True, **again)
    drain_worklists()
    items = due(team)
    assert [(i["order_id"], i["dose_status"], i["scheduled_for"]) for i in items] == [
        (late, "late", utc_text(DAY, "08:00")), (soon, "upcoming", utc_text(DAY, "10:45"))]
    assert later not in {i["order_id"] for i in items}  # not within the hour
    # a dose recorded as not given answers its time too (named by its time, to the second)
    r = team["nurse"].post(f"/api/v1/patients/{patient}/orders/{late}/administrations", {
        "status": "not_given", "reason": "refused",
        "scheduled_for": london(DAY, "08:00").replace(second=42).isoformat()},
        content_type=J)
    assert r.status_code == 201, r.content
    drain_worklists()
    assert [i["order_id"] for i in due(team)] == [soon]


def test_doses_follow_the_patient_to_another_ward_and_leave_on_discharge(
        team, patient, drain_worklists) -> None:
    prescribe(team, patient)
    moved = team["clerk"].post(f"/api/v1/patients/{patient}/transfer", {
        "ward_id": "MED-2", "bed": ""}, content_type=J)
    assert moved.status_code in (200, 201), moved.content
    drain_worklists()
    assert due(team) == [] and len(due(team, "MED-2")) == 1
    gone = team["clerk"].post(f"/api/v1/patients/{patient}/discharge",
                              {"disposition": "home"}, content_type=J)
    assert gone.status_code in (200, 201), gone.content
    drain_worklists()
    assert due(team, "MED-2") == []


def test_who_may_read_medications_due(team, patient) -> None:
    assert team["clerk"].get(DUE, {"ward": "MED-1"}).status_code == 403
    assert team["doc"].get(DUE, {"ward": "MED-1"}).status_code == 200
    unknown = team["nurse"].get(DUE, {"ward": "NOPE"})
    assert unknown.status_code == 400  # the lists' one rule: a bad-parameter naming the wards
    assert unknown["Content-Type"].startswith("application/problem+json")
    assert (unknown.json()["parameter"], "MED-1" in unknown.json()["allowed"]) == ("ward", True)
    assert team["nurse"].get(DUE).status_code in (400, 422)


def resulted(team: dict[str, Client], pid: str, client: str = "doc") -> str:
    order = team[client].post(f"/api/v1/patients/{pid}/orders", {"kind": "lab",
                                                                  "test_code": "CBC"},
                              content_type=J).json()
    base = f"/api/v1/patients/{pid}/orders/{order['order_id']}"
    assert team["nurse"].post(f"{base}/start", {}, content_type=J).status_code == 200
    done = team["nurse"].post(f"{base}/complete", {"results": CBC}, content_type=J)
    assert done.status_code == 200, done.content
    return order["order_id"]


def bearer(make_user: Callable, username: str, role: str) -> Client:
    _, raw = ApiToken.issue(make_user(username, role), "tests")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_results_wait_for_the_ordering_clinician_even_after_discharge(
        team, patient, make_user, drain_worklists) -> None:
    oid = resulted(team, patient)
    team["clerk"].post(f"/api/v1/patients/{patient}/discharge", {"disposition": "home"},
                       content_type=J)
    drain_worklists()
    [item] = team["doc"].get(REVIEW).json()["items"]
    assert item["order_id"] == oid and item["patient_id"] == patient
    assert item["abnormal"] is True and item["high"] == ["PLT"] and item["low"] == ["HGB"]
    assert item["kind"] == "lab" and item["ward_id"] is None
    other = bearer(make_user, "dr-other", "clinician")  # another clinician's list is their own
    assert other.get(REVIEW).json()["items"] == []
    assert team["doc"].get(REVIEW, {"abnormal": True}).json()["items"][0]["order_id"] == oid
    assert team["doc"].get(REVIEW, {"kind": "imaging"}).json()["items"] == []
    ack = team["doc"].post(f"/api/v1/patients/{patient}/orders/{oid}/acknowledge", {},
                           content_type=J)
    assert ack.status_code == 200, ack.content
    drain_worklists()
    assert team["doc"].get(REVIEW).json()["items"] == []


def test_who_may_read_results_to_review(team) -> None:
    assert team["nurse"].get(REVIEW).status_code == 403
    assert team["clerk"].get(REVIEW).status_code == 403
    assert team["doc"].get(REVIEW, {"sort": "nonsense"}).status_code in (400, 422)


def test_the_pages_show_the_lists_with_their_one_click_actions(
        team, patient, make_user, drain_worklists) -> None:
    oid = prescribe(team, patient)
    lab = resulted(team, patient)
    drain_worklists()
    nurse = Client()
    nurse.force_login(make_user("ward-nurse", "nurse"))
    page = nurse.get("/admin/worklists/medications-due/", {"ward": "MED-1"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "DOSEY, Ada" in html and "Due" in html
    assert f"/admin/patients/{patient}/mar/{oid}/record/?slot={slot_of(oid, DAY, '08:00')}" in html
    unknown = nurse.get("/admin/worklists/medications-due/", {"ward": "x'<"})
    assert unknown.status_code == 400  # an unknown filter value: the styled 400, not a 500
    refused = unknown.content.decode()
    assert "Bad request" in refused and "is not a value of Ward (ward)" in refused
    assert "x'<" not in refused  # the value shown escaped
    assert nurse.get("/admin/worklists/results-to-review/").status_code == 403
    doc = Client()
    doc.force_login(make_user("dr-other", "clinician"))
    mine = doc.get("/admin/worklists/results-to-review/")
    assert mine.status_code == 200 and "No results waiting" in mine.content.decode()
    # the API clinician placed the lab order: their page lists it with an Acknowledge form
    owner = Client()
    owner.force_login(make_user("api-clinician", "clinician"))
    listed = owner.get("/admin/worklists/results-to-review/").content.decode()
    assert "DOSEY, Ada" in listed
    assert "Abnormal: Platelets 450 ×10⁹/L, high; Haemoglobin 120 g/L, low" in listed
    assert f"/admin/patients/{patient}/orders/{lab}/acknowledge/" in listed
    back = owner.post(f"/admin/patients/{patient}/orders/{lab}/acknowledge/"
                      "?next=/admin/worklists/results-to-review/")
    assert back.status_code == 302 and back["Location"] == "/admin/worklists/results-to-review/"
    away = owner.post(f"/admin/patients/{patient}/orders/{lab}/acknowledge/"
                      "?next=https://elsewhere.example/")
    assert away["Location"] == f"/admin/patients/{patient}/"
    drain_worklists()
    assert "No results waiting" in owner.get(
        "/admin/worklists/results-to-review/").content.decode()


def test_check_finds_the_new_views_clean_and_a_rebuild_gives_the_same_lists(
        team, patient, his_store, drain_worklists) -> None:
    prescribe(team, patient)
    resulted(team, patient)
    drain_worklists()
    report = maintenance.check(his_store, [patient])
    assert not report.drifted and not report.behind
    before = (due(team), team["doc"].get(REVIEW).json()["items"])
    maintenance.rebuild(his_store, [patient])
    after = (due(team), team["doc"].get(REVIEW).json()["items"])
    def strip(item: dict) -> dict:  # what a row shows; not when or at which event it was written
        return {k: v for k, v in item.items() if k not in ("projected_at", "seq")}

    assert [strip(x) for x in after[0]] == [strip(x) for x in before[0]]
    assert [strip(x) for x in after[1]] == [strip(x) for x in before[1]]
    assert after[0] and after[1]


def test_results_to_review_names_the_abnormal_values_in_words(
        team, patient, make_user, drain_worklists) -> None:
    resulted(team, patient)
    drain_worklists()
    owner = Client()
    owner.force_login(make_user("api-clinician", "clinician"))
    listed = owner.get("/admin/worklists/results-to-review/").content.decode()
    assert "Abnormal: Platelets 450 ×10⁹/L, high; Haemoglobin 120 g/L, low" in listed
    assert "PLT high" not in listed and not names_utc(listed)
