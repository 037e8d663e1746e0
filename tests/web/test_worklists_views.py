"""Worklist pages and API over views maintained by the real projection code (drained)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from tests import worklist_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture
def ward(his_store, reference_data, drain_worklists):
    """Three admitted cardiology patients, one with an assigned STAT order; one not admitted."""
    ids = {}
    for family, given, bed in [("Ibáñez", "Inés", "A01"), ("Ibsen", "Hal", "A02"),
                               ("Smith", "Jo", "A03")]:
        pid = data.register(his_store, family, given)
        ids[family] = (pid, data.admit(his_store, pid, "CARD", "CARD-A", bed))
    ids["Outpatient"] = (data.register(his_store, "Ibarra", "Out"), None)
    pid, adm = ids["Smith"]
    order = data.place_order(his_store, pid, adm, urgency="stat")
    data.update_order(his_store, pid, order, "OrderAssigned", assigneeId="42",
                      assigneeName="Nurse Ratched")
    drain_worklists()
    return ids


def test_it_lists_the_census_sorted_by_bed_with_age_and_stay(ward, api_client) -> None:
    page = api_client("clerk").get("/api/v1/worklists/admitted", {"department": "CARD"}).json()
    assert [r["bed"] for r in page["items"]] == ["A01", "A02", "A03"]
    first = page["items"][0]
    assert first["mrn"] and first["age"] >= 60 and first["length_of_stay"] == 0
    assert page["lag"] is not None


def test_it_finds_names_by_prefix_whatever_the_case_and_accents(ward, api_client) -> None:
    client = api_client("clerk")
    census = client.get("/api/v1/worklists/admitted", {"department": "CARD", "q": "iba"}).json()
    assert [r["name"] for r in census["items"]] == ["IBÁÑEZ, Inés"]
    found = client.get("/api/v1/worklists/patients", {"q": "IB"}).json()
    assert [r["name"] for r in found["items"]] == ["IBÁÑEZ, Inés", "IBARRA, Out", "IBSEN, Hal"]
    assert client.get("/api/v1/worklists/patients", {"q": "i"}).status_code == 400


def test_it_finds_a_patient_by_exact_mrn(ward, api_client, his_store) -> None:
    mrn = his_store.read(f"P_{ward['Smith'][0]}", "patient")["docContents"]["mrn"]
    found = api_client("clerk").get("/api/v1/worklists/patients", {"mrn": mrn.lower()}).json()
    assert [r["patient_id"] for r in found["items"]] == [ward["Smith"][0]]


def test_it_pages_by_continuation_token(ward, api_client) -> None:
    client = api_client("clerk")
    first = client.get("/api/v1/worklists/admitted", {"department": "CARD", "page_size": 2,
                                                      "sort": "name", "dir": "desc"}).json()
    rest = client.get("/api/v1/worklists/admitted", {
        "department": "CARD", "page_size": 2, "sort": "name", "dir": "desc",
        "page": first["continuation"]}).json()
    names = [r["name"] for r in first["items"] + rest["items"]]
    assert names == ["SMITH, Jo", "IBSEN, Hal", "IBÁÑEZ, Inés"]
    assert rest["continuation"] is None


def test_it_shows_active_and_my_orders_with_filters(ward, api_client, make_user) -> None:
    client = api_client("nurse")
    stat = client.get("/api/v1/worklists/orders", {"department": "CARD", "urgency": "stat"})
    assert [r["assignee_name"] for r in stat.json()["items"]] == ["Nurse Ratched"]
    routine = client.get("/api/v1/worklists/orders", {"department": "CARD",
                                                      "urgency": "routine"}).json()
    assert routine["items"] == []
    assert client.get("/api/v1/worklists/my-orders").json()["items"] == []  # not assigned to me


def test_it_drops_discharged_patients_and_their_orders(ward, api_client, his_store,
                                                       drain_worklists) -> None:
    data.discharge(his_store, ward["Smith"][0])
    drain_worklists()
    client = api_client("nurse")
    census = client.get("/api/v1/worklists/admitted", {"department": "CARD"}).json()
    assert "SMITH, Jo" not in [r["name"] for r in census["items"]]
    assert client.get("/api/v1/worklists/orders", {"department": "CARD"}).json()["items"] == []


@pytest.mark.parametrize("path", ["admitted/?department=CARD&sort=name&dir=desc",
                                  "orders/?department=CARD", "my-orders/",
                                  "patients/?q=ib", "patients/?q=x", "dead-letters/"])
def test_it_renders_each_worklist_page_with_freshness(ward, make_user: Callable, path: str
                                                      ) -> None:
    client = Client()
    client.force_login(make_user("all", "clerk", "clinician", "nurse", "admin"))
    response = client.get(f"/admin/worklists/{path}")
    assert response.status_code == 200, response.content[:500]
    body = response.content.decode()
    assert "data-loaded-at" in body or "dead letters" in body.lower()
    if "dead-letters" not in path:
        partial = client.get(f"/admin/worklists/{path}", HTTP_HX_REQUEST="true")
        assert partial.status_code == 200 and "<html" not in partial.content.decode()


def test_it_keeps_order_worklists_from_clerks(ward, api_client) -> None:
    response = api_client("clerk").get("/api/v1/worklists/orders", {"department": "CARD"})
    assert response.status_code == 403
