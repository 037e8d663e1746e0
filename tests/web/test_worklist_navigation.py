"""Getting around a worklist: every department at once, totals, previous and next pages, and
names typed the ways people type them ("SMITH, John", "John Smith", "smi")."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests import worklist_data as data
from worklists.persistence import generations
from worklists.persistence.trackers import read_tracker, save_tracker
from worklists.persistence.view_rows import view_pk
from worklists.projection.rows import NAMES
from worklists.projection.state import PatientState

pytestmark = pytest.mark.django_db


@pytest.fixture
def hospital(his_store, reference_data, drain_worklists):
    """Five admitted patients over two departments, one outpatient."""
    ids = {}
    for family, given, dept, ward, bed in [
            ("Smith", "John", "CARD", "CARD-A", "A01"), ("Smithers", "Jo", "CARD", "CARD-A", "A02"),
            ("Ibáñez", "Inés", "MED", "MED-1", "M101"), ("Johnson", "Smith", "MED", "MED-1", "M102"),
            ("Nuñez", "Ana", "CARD", "CARD-A", "A03")]:
        pid = data.register(his_store, family, given)
        ids[f"{family} admission"] = data.admit(his_store, pid, dept, ward, bed)
        ids[family] = pid
    ids["Out"] = data.register(his_store, "Smythe", "Out")
    drain_worklists()
    return ids


def names(page: dict) -> list[str]:
    return [r["name"] for r in page["items"]]


def test_every_department_at_once_merged_in_order_with_a_total(hospital, api_client) -> None:
    client = api_client("clerk")
    one = client.get("/api/v1/worklists/admitted", {"department": "CARD", "total": True}).json()
    assert one["total"] == 3 and len(one["items"]) == 3
    every = client.get("/api/v1/worklists/admitted", {"sort": "name", "total": True,
                                                       "page_size": 2}).json()
    assert every["total"] == 5
    seen = names(every)
    while every["continuation"]:
        every = client.get("/api/v1/worklists/admitted", {
            "sort": "name", "page_size": 2, "page": every["continuation"]}).json()
        seen += names(every)
    assert seen == ["IBÁÑEZ, Inés", "JOHNSON, Smith", "NUÑEZ, Ana", "SMITH, John",
                    "SMITHERS, Jo"]
    backwards = client.get("/api/v1/worklists/admitted", {"sort": "name", "dir": "desc"})
    assert names(backwards.json()) == seen[::-1]
    assert client.get("/api/v1/worklists/admitted", {"page": "-3"}).status_code == 400
    assert client.get("/api/v1/worklists/admitted", {"page": "x"}).status_code == 400


def test_the_page_offers_every_department(hospital, make_user) -> None:
    client = Client()
    client.force_login(make_user("desk", "clerk"))
    html = client.get("/admin/worklists/admitted/", {"department": "all",
                                                     "sort": "name"}).content.decode()
    assert "All departments" in html and "5 in all" in html
    assert "IBÁÑEZ, Inés" in html and "SMITH, John" in html
    orders = Client()
    orders.force_login(make_user("ward", "nurse"))
    assert "All departments" in orders.get("/admin/worklists/orders/",
                                           {"department": "all"}).content.decode()
    # every department and sort link the page offers opens; an unknown department is the
    # 400 page (a filter value the page never offers), not a 500
    offered = re.findall(r'href="(\?[^"]*)"', html)
    assert offered  # its sort links at least
    for href in offered:
        url = "/admin/worklists/admitted/" + href.replace("&amp;", "&")
        assert client.get(url).status_code == 200, url
    unknown = client.get("/admin/worklists/admitted/", {"department": "<x>"})
    assert unknown.status_code == 400 and "Bad request" in unknown.content.decode()


def test_next_then_previous_returns_to_the_same_rows(hospital, make_user, his_store,
                                                     drain_worklists) -> None:
    for i in range(60):  # more than one page of CARD
        pid = data.register(his_store, f"Pager{i:02d}", "Pat")
        data.admit(his_store, pid, "CARD", "CARD-A")
    drain_worklists()
    client = Client()
    client.force_login(make_user("desk", "clerk"))
    first = client.get("/admin/worklists/admitted/", {"department": "CARD"}).content.decode()
    assert "63 in all" in first and "50 on this page" in first and "Previous page" not in first
    nxt = re.search(r'href="([^"]+)" class="next"', first).group(1).replace("&amp;", "&")
    second = client.get("/admin/worklists/admitted/" + nxt).content.decode()
    assert "13 on page 2" in second and "Next page" not in second
    prev = re.search(r'href="([^"]+)" class="prev"', second).group(1).replace("&amp;", "&")
    again = client.get("/admin/worklists/admitted/" + prev).content.decode()
    rows = lambda html: re.findall(r"<tr class=\"row[12]\">(.*?)</tr>", html, re.S)  # noqa: E731
    assert rows(again) == rows(first)
    # a mangled trail loses only the way back
    assert client.get("/admin/worklists/admitted/" + nxt.replace("back=", "back=%%")
                      ).status_code in (200, 400)


@pytest.mark.parametrize(("typed", "found"), [
    ("SMITH, John", ["SMITH, John"]),
    ("smith, j", ["SMITH, John", "SMITHERS, Jo"]),  # each part a prefix
    ("Smi", ["SMITH, John", "SMITHERS, Jo"]),
    ("John Smith", ["SMITH, John"]),
    ("jo smith", ["SMITH, John", "SMITHERS, Jo"]),
    ("Smith Jo", ["JOHNSON, Smith", "SMITH, John"]),  # read both ways round
    ("ines ibanez", ["IBÁÑEZ, Inés"]),
    ("IBANEZ, INES", ["IBÁÑEZ, Inés"]),
    ("Johnson", ["JOHNSON, Smith"]),
])
def test_names_are_found_the_ways_people_type_them(hospital, api_client, typed: str,
                                                   found: list[str]) -> None:
    page = api_client("clerk").get("/api/v1/worklists/patients", {"q": typed}).json()
    got = names(page)
    assert [n for n in got if not n.startswith("SMYTHE")] == found, (typed, got)


def test_a_name_search_page_invites_typing_before_anything_is_typed(hospital, make_user) -> None:
    client = Client()
    client.force_login(make_user("desk", "clerk"))
    empty = client.get("/admin/worklists/patients/").content.decode()
    assert "Nothing matches." not in empty and "Type a name or an MRN" in empty
    assert "SMITH, John" in client.get("/admin/worklists/patients/",
                                       {"q": "John Smith"}).content.decode()
    assert "at least 2 letters" in client.get("/admin/worklists/patients/",
                                              {"q": "J"}).content.decode()


def test_rows_of_a_tracker_of_an_older_shape_are_written_again(hospital, his_store,
                                                               drain_worklists) -> None:
    """A name row written before rows carried the given name gets it with the next event."""
    pid, admission = hospital["Smith"], hospital["Smith admission"]
    gen = generations.active_generation(his_store)
    state, owned, etag, _ = read_tracker(his_store, pid, gen)
    [key] = [k for k in owned if k[0] == NAMES]
    doc = his_store.read(view_pk(his_store, NAMES, gen, key[1]), pid)
    assert doc["QueryGiven"] == "JOHN"
    old = {k: v for k, v in doc.items() if k != "QueryGiven" and not k.startswith("_")}
    his_store.replace(old, if_match=doc["_etag"])
    save_tracker(his_store, gen, PatientState.from_json({**state.as_json(), "shape": 2}),
                 owned, etag)
    data.place_order(his_store, pid, admission)  # any event of the patient
    drain_worklists()
    assert his_store.read(view_pk(his_store, NAMES, gen, key[1]), pid)["QueryGiven"] == "JOHN"
    assert read_tracker(his_store, pid, gen).state.shape == PatientState(pid).shape
