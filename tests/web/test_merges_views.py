"""After a merge every view shows one patient: the census, the admitted list, the active
orders, Medications due, the medication record, the bed board, the census and the name
search — projected by the real projection (drained), and rebuilt alike."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.management import call_command

from hisadmin.core.store import get_store
from tests.web.fixed_clock import Clock, fixed_clock  # noqa: F401
from worklists.ops import maintenance

pytestmark = pytest.mark.django_db
J = "application/json"
DAY = "2026-06-10"


@pytest.fixture(autouse=True)
def clock(fixed_clock: Callable[[str, str], Clock]) -> Clock:  # noqa: F811
    return fixed_clock(DAY, "07:50")  # ten minutes before the 08:00 round


@pytest.fixture
def merged(team, admit, drain_worklists) -> dict:
    """The woman registered as "Unknown" (admitted to M103, on amoxicillin TDS) is merged
    into her own record by a clerk; the views were following the duplicate before."""
    clerk = team["clerk"]
    survivor = clerk.post("/api/v1/patients", {"given_name": "Zoë", "family_name": "Ibáñez",
                                               "birth_date": "1961-02-03", "sex": "female"},
                          content_type=J).json()
    retired = admit("Unknown", given="Female", bed="M103", birth_date="1961-02-03")
    order = team["doc"].post(f"/api/v1/patients/{retired}/orders", {
        "kind": "medication", "medication_code": "AMOX", "dose": "1", "unit": "g",
        "route": "PO", "frequency": "TDS"}, content_type=J).json()["order_id"]
    drain_worklists()
    assert _admitted(team) == [retired]
    r = clerk.post(f"/api/v1/patients/{survivor['id']}/merge", {
        "retired_id": retired, "retired_etag": clerk.get(f"/api/v1/patients/{retired}")["ETag"],
        "reason": "Unconscious arrival registered as Unknown"}, content_type=J,
        HTTP_IF_MATCH=survivor["etag"])
    assert r.status_code == 200, r.content
    drain_worklists()
    return {"survivor": survivor["id"], "retired": retired, "order": order, **team}


def _admitted(team) -> list[str]:
    r = team["nurse"].get("/api/v1/worklists/admitted", {"department": "MED"})
    assert r.status_code == 200, r.content
    return [row["patient_id"] for row in r.json()["items"]]


def _views(m: dict) -> dict:
    nurse = m["nurse"]
    def items(url: str, **params: str) -> list:
        r = nurse.get(url, params)
        assert r.status_code == 200, (url, r.content)
        return [{k: v for k, v in row.items() if k not in ("projected_at", "etag")}
                for row in r.json()["items"]]
    return {"admitted": items("/api/v1/worklists/admitted", department="MED"),
            "orders": items("/api/v1/worklists/orders", department="MED"),
            "due": items("/api/v1/worklists/medications-due", ward="MED-1"),
            "names": items("/api/v1/worklists/patients", q="Ibáñez"),
            "unknown": items("/api/v1/worklists/patients", q="Unknown")}


def test_every_view_shows_the_one_patient_and_a_rebuild_agrees(merged: dict) -> None:
    m = merged
    views = _views(m)
    assert [r["patient_id"] for r in views["admitted"]] == [m["survivor"]]
    assert views["admitted"][0]["bed"] == "M103"
    assert [(r["patient_id"], r["order_id"]) for r in views["orders"]] == [
        (m["survivor"], m["order"])]
    assert {(r["patient_id"], r["order_id"]) for r in views["due"]} == {
        (m["survivor"], m["order"])}
    assert all(r["name"] == "IBÁÑEZ, Zoë" for r in views["due"])
    assert [r["patient_id"] for r in views["names"]] == [m["survivor"]]
    assert views["unknown"] == []  # the retired record is in no view
    mar = m["nurse"].get(f"/api/v1/patients/{m['survivor']}/mar", {"date": DAY}).json()
    assert [o["order_id"] for o in mar["orders"]] == [m["order"]]
    board = m["nurse"].get("/api/v1/wards/MED-1/beds").json()
    [bed] = [b for b in board if b["code"] == "M103"]
    assert (bed["patient_id"], bed["patient"]["name"]) == (m["survivor"], "IBÁÑEZ, Zoë")
    store = get_store()
    ids = [m["survivor"], m["retired"]]
    assert maintenance.check(store, ids).drifted == {}
    call_command("rebuild_worklists")
    assert _views(m) == views
    assert maintenance.check(store, ids).drifted == {}


def test_the_undo_gives_the_views_their_two_patients_back(merged: dict,
                                                          drain_worklists) -> None:
    m = merged
    merge_id = m["clerk"].get(f"/api/v1/patients/{m['retired']}").json()["merge"]["merge_id"]
    r = m["clerk"].post(f"/api/v1/patients/{m['survivor']}/merges/{merge_id}/undo",
                        {"reason": "Two different women after all"}, content_type=J)
    assert r.status_code == 200, r.content
    drain_worklists()
    assert _admitted(m) == [m["retired"]]
    due = m["nurse"].get("/api/v1/worklists/medications-due", {"ward": "MED-1"}).json()
    assert {row["patient_id"] for row in due["items"]} == {m["retired"]}
    assert maintenance.check(get_store(), [m["survivor"], m["retired"]]).drifted == {}
