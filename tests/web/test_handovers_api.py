"""Shift handover: SBAR written by the outgoing nurse, acknowledged by the next; events,
chart, sheet, roles and problems."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from cosmos_backend.store import Cond, Query
from hisadmin.core import keys
from tests.web.fixed_clock import fixed_clock  # noqa: F401

pytestmark = pytest.mark.django_db
J = "application/json"
SBAR = {"situation": "Stable, afebrile", "background": "Pneumonia day 3",
        "assessment": "Improving", "recommendation": "Switch to oral antibiotics"}


@pytest.fixture
def next_nurse(api_client) -> Client:
    return api_client("nurse", "charge_nurse")


@pytest.fixture
def on_the_25th(fixed_clock):  # noqa: F811
    """Admitted on Wed 25 Nov 2026 in the morning: the day shift named is of the stay."""
    fixed_clock("2026-11-25", "09:30")


def test_it_writes_and_acknowledges_a_handover_as_events(team, admit, next_nurse,
                                                        his_store, on_the_25th) -> None:
    pid = admit("Handed", bed="M102")
    r = team["nurse"].post(f"/api/v1/patients/{pid}/handovers",
                           {**SBAR, "shift": "2026-11-25-day"}, content_type=J)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["id"] == "2026-11-25-day" and body["bed"] == "M102"
    assert body["acknowledged_at"] is None and body["written_by"] == "api-nurse"
    own = team["nurse"].post(f"/api/v1/patients/{pid}/handovers/{body['id']}/acknowledge")
    assert own.status_code == 409 and own.json()["type"].endswith("own-handover")
    ok = next_nurse.post(f"/api/v1/patients/{pid}/handovers/{body['id']}/acknowledge")
    assert ok.status_code == 200 and ok.json()["acknowledged_by"] == "api-nurse-charge_nurse"
    again = next_nurse.post(f"/api/v1/patients/{pid}/handovers/{body['id']}/acknowledge")
    assert again.status_code == 409
    rewrite = team["nurse"].post(f"/api/v1/patients/{pid}/handovers",
                                 {**SBAR, "shift": "2026-11-25-day"}, content_type=J)
    assert rewrite.status_code == 409
    events = his_store.query_all(keys.patient(pid), Query(where=(Cond("docType", "=", "Event"),)))
    kinds = [e["docContents"]["type"] for e in events]
    assert kinds[-2:] == ["HandoverWritten", "HandoverAcknowledged"]


def test_the_audit_trail_says_which_handover_and_who(team, admit, next_nurse, client,
                                                     make_user, on_the_25th) -> None:
    pid = admit("Trailed", bed="M103")
    assert team["nurse"].post(f"/api/v1/patients/{pid}/handovers",
                              {**SBAR, "shift": "2026-11-25-day"},
                              content_type=J).status_code == 201
    assert next_nurse.post(f"/api/v1/patients/{pid}/handovers/2026-11-25-day/acknowledge"
                           ).status_code == 200
    client.force_login(make_user("reader", "nurse"))
    details = [" ".join(d.split()) for d in re.findall(
        r'<tr class="audit-row" data-type="Handover\w+">.*?</tr>',
        client.get(f"/admin/patients/{pid}/").content.decode(), re.S)]
    assert len(details) == 2  # newest first
    assert "Handover for the day shift of Wed 25 Nov written by" in details[1]
    assert "Handover for the day shift of Wed 25 Nov acknowledged by" in details[0]


def test_it_refuses_bad_handovers(team, admit) -> None:
    pid = admit("Refused")
    url = f"/api/v1/patients/{pid}/handovers"
    assert team["nurse"].post(url, {**SBAR, "situation": ""}, content_type=J).status_code == 422
    assert team["nurse"].post(url, {**SBAR, "x": 1}, content_type=J).status_code == 422
    assert team["nurse"].post(url, {**SBAR, "shift": "soon"}, content_type=J).status_code == 422
    assert team["doc"].post(url, SBAR, content_type=J).status_code == 403
    assert team["nurse"].post(f"{url}/2026-01-01-day/acknowledge").status_code == 404
    assert team["nurse"].post(f"{url}/nope/acknowledge").status_code == 404
    registered = team["clerk"].post("/api/v1/patients", {
        "given_name": "Not", "family_name": "Admitted", "birth_date": "1950-01-01"},
        content_type=J).json()["id"]
    r = team["nurse"].post(f"/api/v1/patients/{registered}/handovers", SBAR, content_type=J)
    assert r.status_code == 409


def test_it_shows_the_handover_on_the_chart_and_the_sheet(team, admit, client, make_user
                                                          ) -> None:
    pid = admit("Sheeted", bed="M105")
    assert team["nurse"].post(f"/api/v1/patients/{pid}/handovers", SBAR,
                              content_type=J).status_code == 201
    make_user("ward", "nurse")
    client.login(username="ward", password=_password())
    chart = client.get(f"/admin/patients/{pid}/")
    assert chart.status_code == 200 and b"Switch to oral antibiotics" in chart.content
    assert b"Handover written" in chart.content  # the audit trail
    sheet = client.get("/admin/wards/MED-1/handover/")
    assert sheet.status_code == 200
    assert b"Switch to oral antibiotics" in sheet.content and b"M105" in sheet.content
    assert client.get("/admin/wards/MED-1/handover/?shift=bad").status_code == 200
    assert client.get("/admin/wards/NOPE/handover/").status_code == 404


def _password() -> str:
    from testkit.fixtures import TEST_PASSWORD
    return TEST_PASSWORD


def test_a_colleagues_handover_is_replaced_only_naming_the_version_read(team, admit,
                                                                          next_nurse,
                                                                          on_the_25th) -> None:
    pid = admit("Replaced", bed="M104")
    first = team["nurse"].post(f"/api/v1/patients/{pid}/handovers",
                               {**SBAR, "shift": "2026-11-25-day"}, content_type=J).json()
    mine = {**SBAR, "situation": "Febrile 38,6 °C", "shift": "2026-11-25-day"}
    blind = next_nurse.post(f"/api/v1/patients/{pid}/handovers", mine, content_type=J)
    assert blind.status_code == 409 and blind.json()["type"].endswith("handover-by-other")
    assert "api-nurse wrote" in blind.json()["detail"]
    ok = next_nurse.post(f"/api/v1/patients/{pid}/handovers",
                         {**mine, "replaces": first["written_at"]}, content_type=J)
    assert ok.status_code == 201 and ok.json()["situation"] == "Febrile 38,6 °C"
    own = next_nurse.post(f"/api/v1/patients/{pid}/handovers/2026-11-25-day/acknowledge")
    assert own.status_code == 409  # the version on record is hers now
    taken = team["nurse"].post(f"/api/v1/patients/{pid}/handovers/2026-11-25-day/acknowledge")
    assert taken.status_code == 200  # the first author reads the replacement


@pytest.mark.parametrize("shift", ["9999-12-31-night", "0001-01-01-day"])
def test_a_shift_off_the_calendar_is_a_400_page_and_a_422_in_the_api(team, admit, client,
                                                                     make_user, shift) -> None:
    pid = admit("Calendar", bed="M106")
    client.force_login(make_user("ward-cal", "charge_nurse"))
    for page in ("/admin/wards/MED-1/", "/admin/wards/MED-1/handover/"):
        r = client.get(page, {"shift": shift})
        assert r.status_code == 400, (page, r.status_code)
        assert b"between 1900 and 2999" in r.content
    r = team["nurse"].post(f"/api/v1/patients/{pid}/handovers", {**SBAR, "shift": shift},
                           content_type=J)
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "shift", r.content
    r = team["nurse"].get("/api/v1/wards/MED-1/assignments", {"shift": shift})
    assert r.status_code == 422, r.content


def test_a_handover_is_for_a_shift_of_the_patients_stay(team, admit, fixed_clock  # noqa: F811
                                                        ) -> None:
    """Admitted at 06:30 on the 25th: the night that began on the 24th is of the stay;
    the day before, and the shifts not begun yet, are not."""
    fixed_clock("2026-11-25", "06:30")
    pid = admit("Stayed", bed="M107")
    url = f"/api/v1/patients/{pid}/handovers"
    for outside in ("2026-11-24-day", "2026-11-25-day", "2026-11-25-night", "2027-01-01-day"):
        r = team["nurse"].post(url, {**SBAR, "shift": outside}, content_type=J)
        assert r.status_code == 422, (outside, r.content)
        assert "not during this patient's stay" in r.json()["errors"][0]["message"]
    r = team["nurse"].post(url, {**SBAR, "shift": "2026-11-24-night"}, content_type=J)
    assert r.status_code == 201, r.content
