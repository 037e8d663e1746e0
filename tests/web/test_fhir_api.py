"""The FHIR R4 facade over HTTP: reads of each type, each search parameter, paging; every
answer validates with the fhir.resources R4B models and comes as application/fhir+json."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from fhir.resources.R4B import get_fhir_model_class

from fhir_facade import codes
from tests.web.fixed_clock import Clock, fixed_clock, london  # noqa: F401

pytestmark = pytest.mark.django_db
J = "application/json"
F = "/fhir/R4"
CBC = [
    {"analyte_code": "HGB", "value": 120},
    {"analyte_code": "WBC", "value": "7.5"},
    {"analyte_code": "PLT", "value": 450},
]
PARA = {
    "kind": "medication",
    "medication_code": "PARA",
    "dose": "1000",
    "unit": "mg",
    "route": "PO",
    "frequency": "Q6H",
}


def fhir(client: Client, url: str, status: int = 200) -> dict[str, Any]:
    """GET a FHIR URL: the status, the media type, and the body validated by its model."""
    r = client.get(url if url.startswith("http") else F + url)
    assert r.status_code == status, r.content
    assert r["Content-Type"] == "application/fhir+json"
    body = r.json()
    get_fhir_model_class(body["resourceType"]).model_validate(body)
    return body


def resources(bundle: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    assert bundle["resourceType"] == "Bundle" and bundle["type"] == "searchset"
    found = [e["resource"] for e in bundle.get("entry", []) if e["search"]["mode"] == "match"]
    assert all(kind is None or r["resourceType"] == kind for r in found)
    return found


def link(bundle: dict[str, Any], relation: str) -> str | None:
    return next((x["url"] for x in bundle["link"] if x["relation"] == relation), None)


def post(client: Client, url: str, body: dict, status: int = 200) -> dict[str, Any]:
    r = client.post(url, body, content_type=J)
    assert r.status_code == status, r.content
    return r.json()


@pytest.fixture
def chart(team: dict[str, Client], admit: Callable[..., str],
          fixed_clock: Callable[[str, str], Clock]) -> dict[str, Any]:  # noqa: F811
    """An admitted patient with a coded and a free-text allergy, a medication order with a
    dose given and one not given, a resulted lab test, a reported X-ray and a cancelled
    CT; and the ids of what was made. On a fixed clock: the order's first dose is now
    (11:50 in London), given then; the next dose time, 18:00, is not given."""
    clock = fixed_clock("2026-06-10", "11:50")
    pid = admit(
        "Fhirsen",
        given="Ada",
        birth_date="1961-07-14",
        bed="M103",
        reason="Community-acquired pneumonia",
    )
    p = f"/api/v1/patients/{pid}"
    post(
        team["nurse"],
        f"{p}/allergies",
        {
            "allergen_code": "PENICILLINS",
            "reaction": "Anaphylaxis",
            "severity": "severe",
            "criticality": "high",
        },
    )
    post(team["nurse"], f"{p}/allergies", {"substance": "Sticking plaster", "severity": "mild"})
    med = post(team["doc"], f"{p}/orders", {**PARA, "first_dose": "now"}, 201)["order_id"]
    post(team["nurse"], f"{p}/orders/{med}/ready", {})
    post(
        team["nurse"],
        f"{p}/orders/{med}/administrations",
        {"status": "given", "dose": "1000", "unit": "mg"},
        201,
    )
    clock.at("18:00")  # the next dose time is due
    post(
        team["nurse"],
        f"{p}/orders/{med}/administrations",
        {"status": "not_given", "reason": "refused"},
        201,
    )
    lab = post(
        team["doc"], f"{p}/orders", {"kind": "lab", "test_code": "CBC", "urgency": "stat"}, 201
    )["order_id"]
    post(team["nurse"], f"{p}/orders/{lab}/start", {})
    post(team["nurse"], f"{p}/orders/{lab}/complete", {"results": CBC})
    xray = post(
        team["doc"], f"{p}/orders", {"kind": "imaging", "modality": "CR", "body_part": "CHEST"}, 201
    )["order_id"]
    post(team["nurse"], f"{p}/orders/{xray}/start", {})
    post(team["nurse"], f"{p}/orders/{xray}/complete", {"report": "Right lower lobe opacity."})
    ct = post(
        team["doc"], f"{p}/orders", {"kind": "imaging", "modality": "CT", "body_part": "HEAD"}, 201
    )["order_id"]
    post(team["doc"], f"{p}/orders/{ct}/cancel", {"reason": "Not needed after X-ray"})
    return {
        "pid": pid,
        "mrn": team["clerk"].get(p).json()["mrn"],
        "med": med,
        "lab": lab,
        "xray": xray,
        "ct": ct,
    }


def test_it_reads_a_patient_with_the_mrn_as_identifier(team, chart) -> None:
    body = fhir(team["clerk"], f"/Patient/{chart['pid']}")
    assert body["id"] == chart["pid"]
    [mrn] = body["identifier"]
    assert (mrn["system"], mrn["value"]) == (codes.MRN_SYSTEM, chart["mrn"])
    assert mrn["type"]["coding"][0]["code"] == "MR"
    assert body["name"][0]["family"] == "Fhirsen" and body["name"][0]["given"] == ["Ada"]
    assert body["birthDate"] == "1961-07-14" and body["gender"] == "unknown"


def test_it_searches_patients_by_identifier_with_or_without_the_system(team, chart) -> None:
    for value in (chart["mrn"], f"{codes.MRN_SYSTEM}|{chart['mrn']}", chart["mrn"].lower()):
        bundle = fhir(team["nurse"], f"/Patient?identifier={value}")
        assert bundle["total"] == 1
        assert [r["id"] for r in resources(bundle, "Patient")] == [chart["pid"]]
    for other in ("H9999999", f"urn:other|{chart['mrn']}"):
        bundle = fhir(team["nurse"], f"/Patient?identifier={other}")
        assert bundle["total"] == 0 and resources(bundle) == []


def test_it_searches_patients_by_name_from_the_names_view(
    team, chart, admit, drain_worklists
) -> None:
    admit("Fhirbank", given="Bo", birth_date="1970-01-01")
    admit("Other", given="Fhirsen")
    drain_worklists()
    bundle = fhir(team["clerk"], "/Patient?name=fhir")
    assert bundle["total"] == 2
    assert [r["name"][0]["family"] for r in resources(bundle)] == ["Fhirbank", "Fhirsen"]
    assert fhir(team["clerk"], "/Patient?name=FHIRSEN")["total"] == 1
    assert fhir(team["clerk"], "/Patient?name=Fhirsen, Ad")["total"] == 1
    assert fhir(team["clerk"], "/Patient?name=Ada Fhirsen")["total"] == 1
    assert fhir(team["clerk"], "/Patient?family=Fhirsen&given=Zed")["total"] == 0
    assert fhir(team["clerk"], "/Patient?name=Nobody")["total"] == 0


def test_it_narrows_a_search_by_birthdate(team, chart, admit, drain_worklists) -> None:
    admit("Fhirbank", given="Bo", birth_date="1970-01-01")
    drain_worklists()

    def ids(url: str) -> list[str]:
        return [r["birthDate"] for r in resources(fhir(team["clerk"], url))]

    assert ids("/Patient?name=fhir&birthdate=1961-07-14") == ["1961-07-14"]
    assert ids("/Patient?name=fhir&birthdate=1970") == ["1970-01-01"]
    assert ids("/Patient?name=fhir&birthdate=ge1965-01") == ["1970-01-01"]
    assert ids("/Patient?name=fhir&birthdate=lt1965&birthdate=gt1960") == ["1961-07-14"]
    assert ids(f"/Patient?identifier={chart['mrn']}&birthdate=1961-07-14") == ["1961-07-14"]
    assert ids(f"/Patient?identifier={chart['mrn']}&birthdate=1962") == []
    assert ids(f"/Patient?_id={chart['pid']}") == ["1961-07-14"]


def test_it_searches_by_birthdate_alone_within_ten_years(team, chart, admit,
                                                         drain_worklists) -> None:
    admit("Fhirbank", given="Bo", birth_date="1970-01-01")
    admit("Earlier", given="Cy", birth_date="1969-12-31")
    drain_worklists()

    def names(url: str) -> list[str]:
        return [r["name"][0]["family"] for r in resources(fhir(team["clerk"], url))]

    assert names("/Patient?birthdate=1970-01-01") == ["Fhirbank"]
    assert names("/Patient?birthdate=1961-07-14") == ["Fhirsen"]
    assert names("/Patient?birthdate=ge1969-12-31&birthdate=le1970-01-01") == [
        "Earlier", "Fhirbank"]
    assert names("/Patient?birthdate=gt1969-12-31&birthdate=lt1971") == ["Fhirbank"]
    paged = fhir(team["clerk"], "/Patient?birthdate=ge1961&birthdate=le1970&_count=1")
    assert paged["total"] == 3 and len(resources(paged)) == 1
    assert any(link["relation"] == "next" for link in paged["link"])
    assert names("/Patient?birthdate=1999") == []


def test_it_pages_a_name_search_with_count_and_next_links(team, admit, drain_worklists) -> None:
    for given in ("Al", "Bea", "Cy", "Di", "Ed"):
        admit("Pagewood", given=given)
    drain_worklists()
    bundle = fhir(team["clerk"], "/Patient?name=Pagewood&_count=2")
    seen = []
    while True:
        assert bundle["total"] == 5
        page = resources(bundle, "Patient")
        assert len(page) <= 2
        seen += [r["name"][0]["given"][0] for r in page]
        assert link(bundle, "self").startswith("http://testserver/fhir/R4/Patient?")
        nxt = link(bundle, "next")
        if nxt is None:
            break
        bundle = fhir(team["clerk"], nxt)
    assert sorted(seen) == ["Al", "Bea", "Cy", "Di", "Ed"]
    only_total = fhir(team["clerk"], "/Patient?name=Pagewood&_count=0")
    assert only_total["total"] == 5 and resources(only_total) == []


def test_it_reads_and_searches_encounters_with_class_location_and_department(team, chart) -> None:
    bundle = fhir(team["doc"], f"/Encounter?patient={chart['pid']}")
    [enc] = resources(bundle, "Encounter")
    assert enc["status"] == "in-progress" and enc["class"]["code"] == "IMP"
    assert enc["class"]["system"] == codes.V3_ACT_CODE
    assert enc["subject"]["reference"] == f"Patient/{chart['pid']}"
    ward, bed = enc["location"]
    assert ward["location"]["identifier"]["value"] == "MED-1"
    assert ward["location"]["display"] == "Medical Ward 1" and ward["status"] == "active"
    assert bed["location"]["display"].startswith("Bed M103")
    assert enc["serviceProvider"]["identifier"]["value"] == "MED"
    assert enc["serviceProvider"]["display"] == "Internal Medicine"
    assert enc["reasonCode"][0]["text"] == "Community-acquired pneumonia"
    assert fhir(team["doc"], f"/Encounter/{enc['id']}") == enc
    assert (
        fhir(team["doc"], f"/Encounter?patient=Patient/{chart['pid']}&status=in-progress")["total"]
        == 1
    )
    assert fhir(team["doc"], f"/Encounter?patient={chart['pid']}&status=finished")["total"] == 0


def test_a_discharged_stay_is_a_finished_encounter(team, admit) -> None:
    pid = admit("Gone", given="Al")
    post(team["clerk"], f"/api/v1/patients/{pid}/discharge", {"disposition": "home"})
    [enc] = resources(fhir(team["clerk"], f"/Encounter?patient={pid}&status=finished"))
    assert enc["status"] == "finished" and enc["period"]["end"]
    assert enc["hospitalization"]["dischargeDisposition"]["coding"][0]["code"] == "home"
    assert all(loc["status"] == "completed" for loc in enc["location"])


def test_allergies_are_coded_where_the_allergen_is(team, chart) -> None:
    bundle = fhir(team["nurse"], f"/AllergyIntolerance?patient={chart['pid']}")
    coded, free = resources(bundle, "AllergyIntolerance")
    assert coded["code"]["coding"] == [
        {"system": codes.local_system("Allergen"), "code": "PENICILLINS", "display": "Penicillins"}
    ]
    assert coded["criticality"] == "high" and coded["category"] == ["medication"]
    assert coded["clinicalStatus"]["coding"][0]["code"] == "active"
    assert coded["reaction"][0]["severity"] == "severe"
    assert coded["reaction"][0]["manifestation"][0]["text"] == "Anaphylaxis"
    assert "coding" not in free["code"] and free["code"]["text"] == "Sticking plaster"
    assert fhir(team["nurse"], f"/AllergyIntolerance/{coded['id']}") == coded
    active = f"/AllergyIntolerance?patient={chart['pid']}&clinical-status=active"
    assert fhir(team["nurse"], active)["total"] == 2
    resolved = f"/AllergyIntolerance?patient={chart['pid']}&status=resolved"
    assert fhir(team["nurse"], resolved)["total"] == 0


def test_no_known_allergies_is_an_allergy_intolerance_of_its_own(team, admit) -> None:
    pid = admit("Clear", given="Cy", allergies_asked=False)  # asked here
    post(team["nurse"], f"/api/v1/patients/{pid}/allergies/none", {})
    [nka] = resources(fhir(team["nurse"], f"/AllergyIntolerance?patient={pid}"))
    assert nka["code"]["coding"][0] == {
        "system": codes.SNOMED,
        "code": "716186003",
        "display": "No known allergy",
    }
    assert fhir(team["nurse"], f"/AllergyIntolerance/{nka['id']}") == nka


def test_a_medication_order_is_a_medication_request(team, chart) -> None:
    [req] = resources(fhir(team["doc"], f"/MedicationRequest?patient={chart['pid']}"))
    assert (req["status"], req["intent"], req["priority"]) == ("active", "order", "routine")
    med = req["medicationCodeableConcept"]["coding"][0]
    assert (med["code"], med["display"]) == ("PARA", "Paracetamol")
    dosage = req["dosageInstruction"][0]
    assert dosage["doseAndRate"][0]["doseQuantity"] == {
        "value": 1000,
        "unit": "mg",
        "system": codes.UCUM,
        "code": "mg",
    }
    assert dosage["route"]["coding"][0] == {
        "system": codes.SNOMED,
        "code": "26643006",
        "display": "Oral route",
    }
    repeat = dict(dosage["timing"]["repeat"])
    # the course starts when the order was placed (11:50 in London), with no end
    bounds = repeat.pop("boundsPeriod")
    assert set(bounds) == {"start"}
    start = datetime.fromisoformat(bounds["start"].replace("Z", "+00:00"))
    assert timedelta(0) <= start - london("2026-06-10", "11:50") < timedelta(minutes=1)
    assert repeat == {"frequency": 1, "period": 6, "periodUnit": "h"}
    assert req["encounter"]["reference"].startswith("Encounter/")
    assert fhir(team["doc"], f"/MedicationRequest/{req['id']}") == req
    status = f"/MedicationRequest?patient={chart['pid']}&status=completed,cancelled"
    assert fhir(team["doc"], status)["total"] == 0


def test_doses_given_and_not_given_are_medication_administrations(team, chart) -> None:
    bundle = fhir(team["nurse"], f"/MedicationAdministration?patient={chart['pid']}")
    done = {r["status"]: r for r in resources(bundle, "MedicationAdministration")}
    assert set(done) == {"completed", "not-done"}
    assert done["completed"]["dosage"]["dose"]["value"] == 1000
    assert done["completed"]["request"]["reference"].startswith("MedicationRequest/")
    assert done["not-done"]["statusReason"][0]["text"] == "Refused"
    assert "dosage" not in done["not-done"]
    one = done["not-done"]["id"]
    assert fhir(team["nurse"], f"/MedicationAdministration/{one}") == done["not-done"]
    given = f"/MedicationAdministration?patient={chart['pid']}&status=completed"
    assert [r["status"] for r in resources(fhir(team["nurse"], given))] == ["completed"]


def test_lab_and_imaging_orders_are_service_requests(team, chart) -> None:
    bundle = fhir(team["doc"], f"/ServiceRequest?patient={chart['pid']}")
    found = {r["code"]["coding"][0]["code"]: r for r in resources(bundle, "ServiceRequest")}
    assert set(found) == {"CBC", "CR", "CT"}
    lab, ct = found["CBC"], found["CT"]
    assert lab["category"][0]["coding"][0]["code"] == "108252007"
    assert lab["priority"] == "stat" and lab["status"] == "completed"
    assert ct["category"][0]["coding"][0]["code"] == "363679005"
    assert ct["priority"] == "routine" and ct["status"] == "revoked"
    assert fhir(team["doc"], f"/ServiceRequest/{lab['id']}") == lab
    imaging = f"/ServiceRequest?patient={chart['pid']}&category=imaging"
    assert fhir(team["doc"], imaging)["total"] == 2
    revoked = f"/ServiceRequest?patient={chart['pid']}&status=revoked"
    assert [r["id"] for r in resources(fhir(team["doc"], revoked))] == [ct["id"]]


def test_results_are_observations_in_ucum_and_diagnostic_reports(team, chart) -> None:
    bundle = fhir(team["doc"], f"/Observation?patient={chart['pid']}&status=final")
    obs = {r["code"]["coding"][0]["code"]: r for r in resources(bundle, "Observation")}
    assert set(obs) == {"HGB", "WBC", "PLT"} and bundle["total"] == 3
    hgb = obs["HGB"]
    assert hgb["valueQuantity"] == {
        "value": 120,
        "unit": "g/L",
        "system": codes.UCUM,
        "code": "g/L",
    }
    assert hgb["interpretation"][0]["coding"][0]["code"] == "L"
    assert obs["PLT"]["interpretation"][0]["coding"][0]["code"] == "H"
    assert obs["WBC"]["valueQuantity"]["code"] == "10*9/L"
    assert hgb["referenceRange"][0]["low"]["value"] == 130
    assert hgb["category"][0]["coding"][0]["code"] == "laboratory"
    assert fhir(team["doc"], f"/Observation/{hgb['id']}") == hgb
    reports = resources(fhir(team["doc"], f"/DiagnosticReport?patient={chart['pid']}"))
    by_kind = {r["category"][0]["coding"][0]["code"]: r for r in reports}
    assert set(by_kind) == {"LAB", "RAD"}
    assert len(by_kind["LAB"]["result"]) == 3
    assert by_kind["RAD"]["conclusion"] == "Right lower lobe opacity."
    lab_report = by_kind["LAB"]
    assert fhir(team["doc"], f"/DiagnosticReport/{lab_report['id']}") == lab_report
    for ref in lab_report["result"]:
        fhir(team["doc"], f"/{ref['reference']}")


def test_a_search_pages_by_offset_with_next_and_previous_links(team, chart) -> None:
    first = fhir(team["doc"], f"/Observation?patient={chart['pid']}&_count=2")
    assert first["total"] == 3 and len(resources(first)) == 2
    assert link(first, "previous") is None
    second = fhir(team["doc"], link(first, "next"))
    assert len(resources(second)) == 1 and link(second, "next") is None
    assert link(second, "previous")
    ids = {r["id"] for r in resources(first) + resources(second)}
    assert len(ids) == 3


def test_every_type_answers_a_patient_without_records_with_an_empty_searchset(team, admit) -> None:
    pid = admit("Empty", given="Em", allergies_asked=False)  # no "no known allergies" either
    for kind in (
        "AllergyIntolerance",
        "MedicationRequest",
        "MedicationAdministration",
        "ServiceRequest",
        "Observation",
        "DiagnosticReport",
    ):
        bundle = fhir(team["clerk"], f"/{kind}?patient={pid}")
        assert bundle["total"] == 0 and "entry" not in bundle


def test_an_order_start_kept_without_an_offset_is_read_in_the_site_time_zone(
    team, admit, settings
) -> None:
    settings.TIME_ZONE = "Europe/London"
    settings.HOSPITAL_TIME_ZONE = "Europe/London"  # where the API reads a naive start
    pid = admit("Timely", given="Ty")
    post(
        team["doc"],
        f"/api/v1/patients/{pid}/orders",
        {**PARA, "start_at": "2026-07-01T08:00", "end_at": "2026-07-03T08:00"},
        201,
    )
    [req] = resources(fhir(team["doc"], f"/MedicationRequest?patient={pid}"))
    bounds = req["dosageInstruction"][0]["timing"]["repeat"]["boundsPeriod"]
    assert bounds == {"start": "2026-07-01T07:00:00Z", "end": "2026-07-03T07:00:00Z"}
