"""export_patient and GET /fhir/R4/Patient/{id}/$everything: the whole record and its audit
trail as one Bundle, validated with the fhir.resources R4B models; the same from both."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from fhir.resources.R4B.bundle import Bundle

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import policy
from hisadmin.core.store import get_store
from hisadmin.models import AccessRecord
from patients import use_cases as uc
from patients.domain.results import GivenValue
from patients.persistence import queries
from tests.web.fixed_clock import Clock, fixed_clock  # noqa: F401

pytestmark = pytest.mark.django_db
BASE = "http://testserver/fhir/R4"


@pytest.fixture
def chart(team: dict[str, Client], make_user, fixed_clock: Callable[[str, str], Clock]  # noqa: F811
          ) -> dict[str, Any]:
    """An admitted patient with a coded and a free-text allergy, a medication order with a
    dose given and one not given, a resulted lab test, a reported X-ray and a cancelled CT,
    each change made through its use case by a user of the right role. On a fixed clock:
    the order's first dose is now (11:50 in London), given then; the next dose time, 18:00,
    is not given."""
    clock = fixed_clock("2026-06-10", "11:50")
    clerk, doc, nurse = (
        policy.actor_for(make_user(f"api-{r}", r)) for r in ("clerk", "clinician", "nurse")
    )

    def run(fn, cmd, actor):
        return fn(cmd, UnitOfWork(get_store()), actor=actor)

    patient = run(
        uc.register_patient,
        uc.RegisterPatient(given_name="Ada", family_name="Fhirsen", birth_date=date(1961, 7, 14)),
        clerk,
    )
    pid = patient.patient_id
    run(
        uc.admit_patient,
        uc.AdmitPatient(pid, "MED", "MED-1", "Community-acquired pneumonia", bed="M103"),
        clerk,
    )
    run(
        uc.add_allergy,
        uc.AddAllergy(
            patient_id=pid,
            allergen_code="PENICILLINS",
            reaction="Anaphylaxis",
            severity="severe",
            criticality="high",
        ),
        nurse,
    )
    run(
        uc.add_allergy,
        uc.AddAllergy(patient_id=pid, substance="Sticking plaster", severity="mild"),
        nurse,
    )
    med = run(
        uc.place_order,
        uc.PlaceOrder(
            pid,
            "medication",
            medication_code="PARA",
            dose=Decimal("1000"),
            unit="mg",
            route="PO",
            frequency="Q6H",
            first_dose="now",
        ),
        doc,
    ).order_id
    run(uc.progress_order, uc.ProgressOrder(pid, med, "ready"), nurse)
    run(uc.administer, uc.Administer(pid, med, dose=Decimal("1000"), unit="mg"), nurse)
    clock.at("18:00")  # the next dose time is due
    run(uc.administer, uc.Administer(pid, med, status="not_given", reason="refused"), nurse)
    lab = run(
        uc.place_order, uc.PlaceOrder(pid, "lab", test_code="CBC", urgency="stat"), doc
    ).order_id
    run(uc.progress_order, uc.ProgressOrder(pid, lab, "start"), nurse)
    run(
        uc.complete_order,
        uc.CompleteOrder(
            pid,
            lab,
            (
                GivenValue("HGB", Decimal(120)),
                GivenValue("WBC", Decimal("7.5")),
                GivenValue("PLT", Decimal(450)),
            ),
        ),
        nurse,
    )
    xray = run(
        uc.place_order, uc.PlaceOrder(pid, "imaging", modality="CR", body_part="CHEST"), doc
    ).order_id
    run(uc.progress_order, uc.ProgressOrder(pid, xray, "start"), nurse)
    run(uc.complete_order, uc.CompleteOrder(pid, xray, report="Right lower lobe opacity."), nurse)
    ct = run(
        uc.place_order, uc.PlaceOrder(pid, "imaging", modality="CT", body_part="HEAD"), doc
    ).order_id
    run(uc.progress_order, uc.ProgressOrder(pid, ct, "cancel", reason="Not needed"), doc)
    return {"pid": pid, "mrn": patient.mrn}


def export(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("export_patient", *args, stdout=out, stderr=io.StringIO())
    body = json.loads(out.getvalue())
    Bundle.model_validate(body)  # R4B: types, cardinality, ids, dates
    return body


def kinds(bundle: dict[str, Any]) -> Counter[str]:
    return Counter(e["resource"]["resourceType"] for e in bundle["entry"])


def without_time(bundle: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in bundle.items() if k != "timestamp"}


def test_it_exports_the_whole_record_with_its_audit_trail(chart) -> None:
    bundle = export(chart["mrn"])
    assert bundle["type"] == "searchset" and bundle["total"] == len(bundle["entry"])
    events = queries.events(get_store(), chart["pid"], page_size=500)[0]
    assert kinds(bundle) == {
        "Patient": 1,
        "Encounter": 1,
        "AllergyIntolerance": 2,
        "MedicationRequest": 1,
        "MedicationAdministration": 2,
        "ServiceRequest": 3,
        "Observation": 3,
        "DiagnosticReport": 2,
        "AuditEvent": len(events),
    }
    first = bundle["entry"][0]
    assert first["resource"]["id"] == chart["pid"] and first["search"]["mode"] == "match"
    assert {e["search"]["mode"] for e in bundle["entry"][1:]} == {"include"}

    trail = [
        e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "AuditEvent"
    ]
    assert [a["subtype"][0]["code"] for a in trail] == [
        e["type"] for e in sorted(events, key=lambda e: e["seq"])
    ]
    registered, *_ = trail
    assert registered["action"] == "C" and registered["subtype"][0]["display"] == "Registered"
    assert registered["entity"][0]["what"]["reference"] == f"Patient/{chart['pid']}"
    assert registered["entity"][0]["description"].startswith("Registered FHIRSEN, Ada with MRN")
    given = next(a for a in trail if a["subtype"][0]["code"] == "MedicationAdministered")
    assert given["agent"][0]["who"]["identifier"]["value"]
    assert given["agent"][0]["name"] == "api-nurse" and given["agent"][0]["requestor"] is True
    assert given["entity"][1]["what"]["reference"].startswith("MedicationRequest/")
    cancelled = next(a for a in trail if a["subtype"][0]["code"] == "OrderCancelled")
    assert cancelled["action"] == "U"
    assert cancelled["entity"][1]["what"]["reference"].startswith("ServiceRequest/")


def test_everything_serves_the_same_bundle(chart, team: dict[str, Client]) -> None:
    r = team["nurse"].get(f"/fhir/R4/Patient/{chart['pid']}/$everything")
    assert r.status_code == 200 and r["Content-Type"] == "application/fhir+json"
    assert r["Cache-Control"] == "no-store"
    served = r.json()
    Bundle.model_validate(served)
    assert without_time(served) == without_time(export(chart["mrn"], "--base", BASE))
    assert all(e["fullUrl"].startswith((f"{BASE}/", "urn:uuid:")) for e in served["entry"])


def test_everything_answers_errors_in_fhir(chart, team, api_client) -> None:
    url = f"/fhir/R4/Patient/{chart['pid']}/$everything"
    unknown = team["nurse"].get("/fhir/R4/Patient/00000000-0000-4000-8000-000000000000/$everything")
    assert unknown.status_code == 404 and unknown.json()["resourceType"] == "OperationOutcome"
    assert team["nurse"].get("/fhir/R4/Patient/not-an-id/$everything").status_code == 404
    assert Client().get(url).status_code == 401
    assert api_client("admin").get(url).status_code == 403
    assert team["nurse"].post(url).status_code == 405


def test_it_writes_a_file_and_refuses_bad_input_leaving_nothing(chart, tmp_path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "record.json"
    call_command("export_patient", chart["mrn"], "--out", str(out), stderr=io.StringIO())
    written = json.loads(out.read_text())
    assert without_time(written) == without_time(export(chart["mrn"]))
    assert out.stat().st_mode & 0o077 == 0  # the owner's alone

    for args, message in [
        (("H9999999", "--out", str(folder / "x.json")), "no patient with MRN 'H9999999'"),
        (("", "--out", str(folder / "x.json")), "no patient with MRN ''"),
        ((chart["mrn"], "--out", str(folder / "nodir" / "x.json")), "there is no directory"),
        ((chart["mrn"], "--base", "ftp://x"), "is not an http(s) URL"),
    ]:
        with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
            call_command("export_patient", *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert sorted(p.name for p in folder.iterdir()) == ["record.json"]


def test_an_export_is_recorded_in_the_access_audit(chart, tmp_path) -> None:
    export(chart["mrn"])
    export(chart["mrn"], "--by", "api-nurse")
    seen = list(AccessRecord.of_patient(chart["pid"]).filter(part__contains="exported"))
    assert [r.username for r in seen][0] == "api-nurse"
    assert seen[1].username.endswith("(server account)") and seen[1].user_id is None
    assert {r.client for r in seen} == {"server command line"}
    before = AccessRecord.objects.count()
    with pytest.raises(CommandError, match="--by 'ghost': no active user"):
        call_command("export_patient", chart["mrn"], "--by", "ghost", stdout=io.StringIO())
    assert AccessRecord.objects.count() == before


def test_an_export_is_made_only_for_someone_who_may_read_the_record(chart, make_user) -> None:
    """``--by`` an admin-only account (or one with no role) is refused, nothing exported
    and nothing recorded in their name."""
    make_user("records-admin", "admin")
    make_user("no-role")
    before = AccessRecord.objects.count()
    for who in ("records-admin", "no-role"):
        out = io.StringIO()
        with pytest.raises(CommandError, match=f"--by '{who}': may not read"):
            call_command("export_patient", chart["mrn"], "--by", who, stdout=out)
        assert out.getvalue() == ""
    assert AccessRecord.objects.count() == before
