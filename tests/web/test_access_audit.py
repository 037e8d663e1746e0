"""The access audit through pages, the JSON API and FHIR: each view of one patient's record
is recorded (who, when, which patient, which part, from where); lists and failed reads
are not; admins see the records on a page and in ``access_report``."""

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
from operations.models import AccessRecord

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def chart(team: dict[str, Client], admit: Callable[..., str]) -> dict[str, str]:
    pid = admit("Viewed", given="Vera")
    r = team["doc"].post(
        f"/api/v1/patients/{pid}/orders",
        {
            "kind": "medication",
            "medication_code": "PARA",
            "dose": "1000",
            "unit": "mg",
            "route": "PO",
            "frequency": "Q6H",
        },
        content_type=J,
    )
    assert r.status_code == 201, r.content
    body = r.json()
    mrn = team["clerk"].get(f"/api/v1/patients/{pid}").json()["mrn"]
    AccessRecord.objects.all().delete()  # the setup's own reads are not what is tested
    return {"pid": pid, "oid": body.get("order_id") or body["orderId"], "mrn": mrn}


def views(pid: str) -> list[tuple[str, str, str]]:
    access_log.flush()
    return [
        (r.username, r.part, r.channel)
        for r in AccessRecord.objects.filter(patient_id=pid).order_by("pk")
    ]


@pytest.fixture
def nurse(make_user: Callable[..., User]) -> Client:
    client = Client(REMOTE_ADDR="10.1.2.3")
    client.force_login(make_user("rn-viewer", "nurse"))
    return client


def test_it_records_the_chart_mar_and_order_page_with_who_and_where(chart, nurse) -> None:
    pid, oid = chart["pid"], chart["oid"]
    for url in (
        f"/admin/patients/{pid}/",
        f"/admin/patients/{pid}/mar/",
        f"/admin/patients/{pid}/orders/{oid}/",
    ):
        assert nurse.get(url).status_code == 200
    assert views(pid) == [
        ("rn-viewer", "Chart", "page"),
        ("rn-viewer", "Medication record", "page"),
        ("rn-viewer", "Order detail", "page"),
    ]
    record = AccessRecord.objects.filter(patient_id=pid).first()
    assert record.client == "10.1.2.3"
    assert abs(record.at - timezone.now()) < timedelta(minutes=1)


def test_it_records_api_reads_by_their_part(chart, api_client) -> None:
    pid, oid = chart["pid"], chart["oid"]
    api = api_client("clinician")
    for url in (
        f"/api/v1/patients/{pid}",
        f"/api/v1/patients/{pid}/mar",
        f"/api/v1/patients/{pid}/orders/{oid}",
        f"/api/v1/patients/{pid}/events",
    ):
        assert api.get(url).status_code == 200, url
    assert views(pid) == [
        ("api-clinician", "Record", "api"),
        ("api-clinician", "Medication record", "api"),
        ("api-clinician", "Order", "api"),
        ("api-clinician", "History", "api"),
    ]


def test_it_records_fhir_reads_and_searches_per_patient(chart, api_client) -> None:
    pid = chart["pid"]
    api = api_client("nurse")
    assert api.get(f"/fhir/R4/Patient/{pid}").status_code == 200
    bundle = api.get(f"/fhir/R4/MedicationRequest?patient={pid}").json()
    assert bundle["total"] == 1
    request_id = bundle["entry"][0]["resource"]["id"]
    assert api.get(f"/fhir/R4/MedicationRequest/{request_id}").status_code == 200
    assert api.get(f"/fhir/R4/Patient/{pid}/$everything").status_code == 200
    assert views(pid) == [
        ("api-nurse", "FHIR Patient", "fhir"),
        ("api-nurse", "FHIR MedicationRequest search", "fhir"),
        ("api-nurse", "FHIR MedicationRequest", "fhir"),
        ("api-nurse", "FHIR Patient $everything", "fhir"),
    ]


def test_it_records_no_failed_read_list_or_write(chart, nurse, api_client) -> None:
    pid = chart["pid"]
    assert nurse.get("/admin/patients/no-such-patient/").status_code == 404
    assert nurse.get("/admin/worklists/admitted/?department=MED").status_code == 200
    assert api_client("clerk").get(f"/fhir/R4/Patient/{pid}x").status_code == 404
    assert api_client().get(f"/api/v1/patients/{pid}").status_code == 403
    assert views(pid) == []
    # A client calling its read a timed refresh is still recorded: the header is its word.
    assert nurse.get(f"/admin/patients/{pid}/", HTTP_X_IDLE_PASSIVE="1").status_code == 200
    assert views(pid) == [("rn-viewer", "Chart", "page")]


def test_admins_see_who_viewed_a_record_others_may_not(chart, nurse, make_user) -> None:
    pid = chart["pid"]
    nurse.get(f"/admin/patients/{pid}/mar/")
    boss = Client()
    boss.force_login(make_user("privacy-officer", "admin"))
    found = boss.get("/admin/access-log/", {"mrn": chart["mrn"]})
    assert found.status_code == 302 and found["Location"].endswith(f"/patients/{pid}/access/")
    access_log.flush()
    page = boss.get(found["Location"]).content.decode()
    assert "rn-viewer" in page and "Medication record" in page and "10.1.2.3" in page
    assert "Viewed, Vera".upper().split(",")[0] in page
    assert (
        "No patient has this MRN"
        in boss.get("/admin/access-log/", {"mrn": "X404"}).content.decode()
    )
    assert boss.get(found["Location"], {"since": "not-a-day"}).status_code == 200
    for odd in ("a/b", "#1", "x" * 300, "%00"):
        assert boss.get("/admin/access-log/", {"mrn": odd}).status_code == 200, odd
    assert boss.get("/admin/patients/no-such-patient/access/").status_code == 404
    assert boss.get(f"/admin/patients/{pid}/access/", {"since": "2026-02-30"}).status_code == 200
    assert nurse.get(f"/admin/patients/{pid}/access/").status_code == 403
    assert nurse.get("/admin/access-log/").status_code == 403


def test_the_chart_links_to_the_access_log_for_admins_only(chart, nurse, make_user) -> None:
    pid = chart["pid"]
    assert "access-log-link" not in nurse.get(f"/admin/patients/{pid}/").content.decode()
    both = Client()
    both.force_login(make_user("charge-nurse-admin", "nurse", "admin"))
    assert 'id="access-log-link"' in both.get(f"/admin/patients/{pid}/").content.decode()


def test_access_report_prints_a_table_since_a_day(chart, nurse) -> None:
    nurse.get(f"/admin/patients/{chart['pid']}/")
    out = io.StringIO()
    call_command(
        "access_report",
        "--patient",
        chart["mrn"],
        "--since",
        timezone.localdate().isoformat(),
        stdout=out,
    )
    text = out.getvalue()
    assert "rn-viewer" in text and "Chart" in text and "Page" in text and "1 view" in text
    out = io.StringIO()
    call_command("access_report", "--patient", chart["mrn"], "--json", stdout=out)
    assert '"username": "rn-viewer"' in out.getvalue()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--patient", "NOPE-1"], "No patient has MRN"),
        (["--patient", "X", "--since", "yesterday"], "is not a date"),
        (["--patient", " "], "needs an MRN"),
    ],
)
def test_access_report_refuses_bad_input(his_store, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("access_report", *args, stdout=io.StringIO())
