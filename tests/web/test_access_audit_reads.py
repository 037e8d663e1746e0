"""Every read of a patient is in the access audit: an MRN lookup, FHIR reads and searches
(each patient answered), ``$everything`` and exports as views of the record; worklist pages
and the API's lists as one list-view record holding the patients shown; the access-log page
shows both; ``prune_access_log`` keeps the retention period."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from hisadmin.core import access_log
from hisadmin.core.access_log import Access
from operations.models import AccessRecord

pytestmark = pytest.mark.django_db


@pytest.fixture
def ward(team: dict[str, Client], admit: Callable[..., str],
         drain_worklists: Callable[[], int]) -> dict[str, object]:
    """Two patients admitted to MED-1 (their ids and MRNs), on the worklists; the setup's
    reads forgotten."""
    pids = [admit("Listed", given="Lea", bed="M101"), admit("Listwell", given="Lou")]
    drain_worklists()
    mrns = [team["clerk"].get(f"/api/v1/patients/{p}").json()["mrn"] for p in pids]
    AccessRecord.objects.all().delete()
    return {"pids": pids, "mrns": mrns}


def views(pid: str) -> list[tuple[str, str, str]]:
    access_log.flush()
    return [(r.username, r.part, r.channel)
            for r in AccessRecord.objects.filter(patient_id=pid).order_by("pk")]


def lists() -> list[tuple[str, str, str, list[str]]]:
    access_log.flush()
    return [(r.username, r.part, r.channel, r.listed.split())
            for r in AccessRecord.objects.filter(patient_id="").order_by("pk")]


@pytest.fixture
def nurse(make_user: Callable[..., User]) -> Client:
    client = Client(REMOTE_ADDR="10.9.8.7")
    client.force_login(make_user("rn-lists", "nurse"))
    return client


def test_an_mrn_lookup_is_a_view_of_the_record(ward, api_client) -> None:
    pid, mrn = ward["pids"][0], ward["mrns"][0]
    api = api_client("clerk")
    found = api.get("/api/v1/patients", {"mrn": mrn})
    assert found.status_code == 200 and found.json()[0]["id"] == pid
    assert views(pid) == [("api-clerk", "Record (MRN lookup)", "api")]
    assert api.get("/api/v1/patients", {"mrn": "NOPE-404"}).json() == []
    assert api_client().get("/api/v1/patients", {"mrn": mrn}).status_code == 403
    assert views(pid) == [("api-clerk", "Record (MRN lookup)", "api")]
    assert lists() == []


def test_fhir_reads_searches_and_everything_record_each_patient(ward, api_client) -> None:
    (first, second), mrn = ward["pids"], ward["mrns"][0]
    api = api_client("nurse")
    assert api.get(f"/fhir/R4/Patient/{first}").status_code == 200
    assert api.get("/fhir/R4/Patient", {"identifier": mrn}).json()["total"] == 1
    both = api.get("/fhir/R4/Patient", {"name": "List"}).json()
    assert {e["resource"]["id"] for e in both["entry"]} == {first, second}
    assert api.get(f"/fhir/R4/Patient/{first}/$everything").status_code == 200
    assert views(first) == [
        ("api-nurse", "FHIR Patient", "fhir"),
        ("api-nurse", "FHIR Patient search", "fhir"),
        ("api-nurse", "FHIR Patient search", "fhir"),
        ("api-nurse", "FHIR Patient $everything", "fhir"),
    ]
    assert views(second) == [("api-nurse", "FHIR Patient search", "fhir")]


def test_an_export_is_a_view_of_the_record(ward, make_user) -> None:
    make_user("records-officer", "clerk")
    call_command("export_patient", ward["mrns"][1], "--by", "records-officer",
                 stdout=io.StringIO())
    assert views(ward["pids"][1]) == [
        ("records-officer", "Whole record, exported (FHIR Bundle)", "fhir")]


def test_a_worklist_page_and_its_refresh_write_one_list_view_each(ward, nurse) -> None:
    pids = ward["pids"]
    assert nurse.get("/admin/worklists/admitted/", {"department": "MED"}).status_code == 200
    assert nurse.get("/admin/worklists/admitted/", {"department": "MED"},
                     HTTP_HX_REQUEST="true", HTTP_X_IDLE_PASSIVE="1").status_code == 200
    assert nurse.get("/admin/worklists/patients/", {"q": "Listwell"}).status_code == 200
    assert [(u, p, c, set(ids)) for u, p, c, ids in lists()] == [
        ("rn-lists", "Admitted patients", "page", set(pids)),
        ("rn-lists", "Admitted patients", "page", set(pids)),
        ("rn-lists", "Find patients", "page", {pids[1]}),
    ]
    assert AccessRecord.objects.get(pk=AccessRecord.objects.filter(patient_id="")
                                    .first().pk).client == "10.9.8.7"
    assert views(pids[0]) == []  # a list is not a view of the record itself
    nurse.get("/admin/worklists/patients/", {"q": "Nobodyhere"})
    assert len(lists()) == 3  # an empty list shows no patient: nothing written


def test_the_api_lists_write_one_list_view_each(ward, api_client) -> None:
    pids = ward["pids"]
    api = api_client("nurse")
    admitted = api.get("/api/v1/worklists/admitted", {"department": "MED"}).json()["items"]
    assert {row["patient_id"] for row in admitted} == set(pids)
    assert api.get("/api/v1/worklists/patients", {"q": "Listed"}).status_code == 200
    assert api.get("/api/v1/worklists/admitted", {"page": "forged"}).status_code == 400
    shown = lists()
    assert [(u, p, c) for u, p, c, _ in shown] == [
        ("api-nurse", "Worklists: admitted", "api"),
        ("api-nurse", "Worklists: patients", "api")]
    api.get("/api/v1/worklists/my-orders")  # nothing assigned: an empty list, no record
    assert len(lists()) == 2
    assert set(shown[0][3]) == set(pids) and shown[1][3] == [pids[0]]


def test_a_bed_board_and_the_wards_api_write_one_list_view_each(ward, nurse,
                                                                 api_client) -> None:
    in_bed = ward["pids"][0]
    assert nurse.get("/admin/wards/MED-1/").status_code == 200
    assert api_client("nurse").get("/api/v1/wards/MED-1/beds").status_code == 200
    assert lists() == [("rn-lists", "Bed board", "page", [in_bed]),
                       ("api-nurse", "Wards: MED-1 beds", "api", [in_bed])]


def test_the_access_log_page_shows_the_lists_that_showed_the_patient(
        ward, nurse, make_user) -> None:
    pid = ward["pids"][0]
    nurse.get("/admin/worklists/admitted/", {"department": "MED"})
    nurse.get(f"/admin/patients/{pid}/")
    nurse.get("/admin/worklists/patients/", {"q": "Listwell"})  # not this patient
    access_log.flush()
    assert [r.part for r in AccessRecord.of_patient(pid)] == ["Chart", "Admitted patients"]
    boss = Client()
    boss.force_login(make_user("privacy-lists", "admin"))
    page = boss.get(f"/admin/patients/{pid}/access/").content.decode()
    assert "Admitted patients" in page and "(in a list of 2 patients)" in page
    assert "Find patients" not in page


def test_list_views_are_queued_and_written_in_one_batch() -> None:
    written: list[list[Access]] = []
    log = access_log.AccessLog(lambda batch: written.append(list(batch)), interval=60)
    log._background = True  # queued as in a server process, without starting the thread
    now = timezone.now()
    for n in range(3):
        log.record(Access(now, "", "Admitted patients", "page", 1, "u", "", (f"p{n}", "q")))
    assert written == [] and log.pending() == 3
    assert log.flush() == 3 and len(written) == 1


def test_prune_access_log_deletes_what_is_older_than_the_retention(db) -> None:
    now = timezone.now()
    AccessRecord.write_many([
        Access(now - timedelta(days=400), "old", "Chart", "page", 1, "u", ""),
        Access(now - timedelta(days=400), "", "Admitted patients", "page", 1, "u", "",
               ("old", "other")),
        Access(now - timedelta(days=10), "recent", "Chart", "page", 1, "u", ""),
    ])
    out = io.StringIO()
    call_command("prune_access_log", "--older-than", "365", "--dry-run", stdout=out)
    assert "2 access records" in out.getvalue() and AccessRecord.objects.count() == 3
    out = io.StringIO()
    call_command("prune_access_log", "--older-than", "365", stdout=out)
    assert "2 access records older than 365 days deleted" in out.getvalue()
    assert list(AccessRecord.objects.values_list("patient_id", flat=True)) == ["recent"]
    with pytest.raises(CommandError, match="at least 1"):
        call_command("prune_access_log", "--older-than", "0", stdout=io.StringIO())
