"""The midnight census in the API and on its page: ranges, problems, the chart and the CSV."""

from __future__ import annotations

import csv
from datetime import datetime, time, timedelta
from io import StringIO

import pytest
import time_machine
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.inputs import hospital_time_zone, hospital_today
from patients import use_cases
from patients.persistence import reference

pytestmark = pytest.mark.django_db
URL = "/api/v1/wards/census"
PAGE = "/admin/worklists/census/"


@pytest.fixture
def ward_today(team, admit, drain_worklists) -> None:
    """Medical Ward 1 (10 beds) today: three admitted, one of them discharged."""
    ids = [admit(f"Census{i}") for i in range(3)]
    r = team["clerk"].post(f"/api/v1/patients/{ids[0]}/discharge", {"disposition": "home"},
                           content_type="application/json")
    assert r.status_code in (200, 201), r.content
    drain_worklists()


def _after_midnight() -> time_machine.travel:
    """The clock at 00:30 the next morning (hospital time), ticking on."""
    tomorrow = hospital_today() + timedelta(days=1)
    return time_machine.travel(datetime.combine(tomorrow, time(0, 30), hospital_time_zone()),
                               tick=True)


def test_it_answers_a_wards_days_with_counts_and_occupancy(ward_today, team) -> None:
    today = hospital_today()
    span = {"ward": "MED-1", "from": str(today - timedelta(days=1)), "to": str(today)}
    r = team["nurse"].get(URL, span)
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["ward"], body["ward_name"], body["from"], body["to"]) == (
        "MED-1", "Medical Ward 1", str(today - timedelta(days=1)), str(today))
    yesterday, now = body["days"]
    assert yesterday["at_midnight"] == 0 and yesterday["admissions"] == 0
    counts = ("at_start", "admissions", "discharges", "transfers_in", "transfers_out",
              "at_midnight", "beds", "occupancy")
    assert {k: now[k] for k in counts} == {  # tonight's midnight has not come yet
        "at_start": 0, "admissions": 3, "discharges": 1, "transfers_in": 0,
        "transfers_out": 0, "at_midnight": None, "beds": 10, "occupancy": None}
    with _after_midnight():
        past = team["nurse"].get(URL, span).json()["days"][1]
    assert {k: past[k] for k in counts} == {
        "at_start": 0, "admissions": 3, "discharges": 1, "transfers_in": 0,
        "transfers_out": 0, "at_midnight": 2, "beds": 10, "occupancy": 20.0}


def test_without_a_ward_it_answers_every_ward(ward_today, team) -> None:
    today = str(hospital_today())
    r = team["clerk"].get(URL, {"from": today, "to": today})
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["from"], body["to"]) == (today, today) and body["time_zone"]
    wards = {w["ward"]: w for w in body["wards"]}
    assert set(wards) == {"CARD-A", "CARD-CCU", "MED-1", "MED-2", "SURG-1", "PAED-1"}
    assert [w["ward"] for w in body["wards"]][:2] == ["CARD-A", "CARD-CCU"]  # Cardiology
    assert wards["MED-1"]["days"][0]["admissions"] == 3
    assert wards["MED-2"]["days"][0]["admissions"] == 0
    assert wards["MED-1"] == team["clerk"].get(URL, {"ward": "MED-1", "from": today,
                                                     "to": today}).json()


def test_past_days_count_the_beds_the_ward_had_then(ward_today, team, his_store,
                                                    drain_worklists) -> None:
    """Two beds added to Medical Ward 1 today: yesterday keeps its 10, today has 12."""
    ward, version = reference.entry(his_store, "Ward", "MED-1")
    use_cases.save_reference_entry(use_cases.SaveReferenceEntry(
        "Ward", "MED-1", {"beds": [*ward["beds"], "M111", "M112"]},
        expected_version=version), UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    reference.invalidate()
    today = hospital_today()
    with _after_midnight():
        yesterday, now = team["nurse"].get(URL, {
            "ward": "MED-1", "from": str(today - timedelta(days=1)),
            "to": str(today)}).json()["days"]
    assert (yesterday["beds"], now["beds"]) == (10, 12)
    assert now["occupancy"] == round(100 * 2 / 12, 1)


def test_it_takes_the_last_four_weeks_when_no_day_is_given(team, reference_data) -> None:
    body = team["clerk"].get(URL, {"ward": "MED-1"}).json()
    assert len(body["days"]) == 28 and body["to"] == str(hospital_today())


@pytest.mark.parametrize("query", [
    {"from": "2026-01-01", "to": "2027-01-02"},  # 367 days
    {"from": "2026-02-01", "to": "2026-01-01"},  # reversed
    {"from": "01/02/2026", "to": "2026-01-03"},
    {"from": "2026-02-30"},
])
def test_it_refuses_a_bad_span_with_a_problem(team, reference_data, query) -> None:
    r = team["clerk"].get(URL, {"ward": "MED-1", **query})
    assert r.status_code == 400, r.content
    assert r["Content-Type"] == "application/problem+json"
    assert r.json()["type"] == "/api/v1/problems/bad-census-span"


def test_a_whole_leap_year_is_one_span(team, reference_data) -> None:
    r = team["clerk"].get(URL, {"ward": "MED-1", "from": "2028-01-01", "to": "2028-12-31"})
    assert r.status_code == 200 and len(r.json()["days"]) == 366


def test_an_unknown_ward_is_a_bad_parameter_naming_the_wards(team, reference_data) -> None:
    r = team["clerk"].get(URL, {"ward": "NOPE"})
    assert r.status_code == 400 and r["Content-Type"] == "application/problem+json"
    body = r.json()
    assert (body["type"], body["parameter"]) == ("/api/v1/problems/bad-parameter", "ward")
    assert "MED-1" in body["allowed"] and "NOPE" in body["detail"]


def test_it_is_documented_and_needs_a_clinical_role(api_client, reference_data) -> None:
    schema = api_client("clerk").get("/api/v1/openapi.json").json()
    operation = schema["paths"][URL]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"ward", "from", "to"}
    assert api_client().get(URL, {"ward": "MED-1"}).status_code == 403


def test_the_page_shows_a_chart_a_table_and_offers_the_csv(ward_today, make_user) -> None:
    client = Client()
    client.force_login(make_user("census-clerk", "clerk"))
    today = hospital_today()
    r = client.get(PAGE, {"ward": "MED-1", "from": str(today - timedelta(days=2)),
                          "to": str(today)})
    assert r.status_code == 200
    html = r.content.decode()
    assert "<svg" in html and "<title id=\"census-chart-title\">" in html and "<desc" in html
    assert 'id="census-table"' in html and "Medical Ward 1" in html
    assert "MED-1" not in html.split('id="census-table"')[1]
    assert "not yet" in html.split('id="census-table"')[1]
    assert "http://" not in html.split("<svg")[1].split("</svg>")[0].replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    with _after_midnight():
        client.force_login(make_user("census-night-clerk", "clerk"))  # the idle one: out
        assert "20.0 %" in client.get(PAGE, {"ward": "MED-1", "from": str(today),
                                             "to": str(today)}).content.decode()
        csv_response = client.get(PAGE, {"ward": "MED-1", "from": str(today),
                                         "to": str(today), "format": "csv"})
    assert csv_response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(StringIO(csv_response.content.decode())))
    assert rows == [["date", "in_at_start_of_day", "admissions", "transfers_in",
                     "transfers_out", "discharges", "in_at_midnight", "beds",
                     "occupancy_percent"], [str(today), "0", "3", "0", "0", "1", "2", "10", "20"]]


def test_the_page_answers_bad_input_without_a_5xx(make_user, reference_data) -> None:
    client = Client()
    client.force_login(make_user("census-nurse", "nurse"))
    bad = client.get(PAGE, {"ward": "MED-1", "from": "yesterday"})
    assert bad.status_code == 400 and b"YYYY-MM-DD" in bad.content
    unknown = client.get(PAGE, {"ward": "NOPE"})
    assert unknown.status_code == 400 and "(ward)" in unknown.content.decode()
    assert "MED-1" in unknown.content.decode()
    nobody = Client()
    nobody.force_login(make_user("census-nobody"))
    assert nobody.get(PAGE).status_code == 403
