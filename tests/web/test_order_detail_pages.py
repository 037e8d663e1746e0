"""The order page and the words on the patient pages: every field of an order, its note,
overrides, administrations, results and history; the chart and the audit trail naming the
order (or allergy) each event concerns and who did it by full name; labels, not codes."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.policy import actor_for
from patients import use_cases
from patients.domain.events import EventType
from patients.domain.results import GivenValue
from patients.pages.audit import describe
from patients.pages.labels import label
from patients.persistence import queries
from testkit.fixtures import TEST_PASSWORD

pytestmark = pytest.mark.django_db
NOTE = "Give with food; check the rash daily"


def person(make_user, username: str, role: str, first: str, last: str) -> User:
    user = make_user(username, role)
    user.first_name, user.last_name = first, last
    user.save()
    return user


@pytest.fixture
def staff(make_user) -> dict[str, User]:
    return {
        "doc": person(make_user, "drgrey", "clinician", "Meredith", "Grey"),
        "nurse": person(make_user, "nurseb", "nurse", "Carla", "Espinosa"),
        "clerk": person(make_user, "deskc", "clerk", "Cole", "Desk"),
    }


def login(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def placed(his_store, reference_data, staff) -> dict[str, str]:
    """A penicillin-allergic inpatient with amoxicillin placed over the allergy warning
    (with a note), marked ready and given once by the nurse."""
    clerk, doc, nurse = (actor_for(staff[k]) for k in ("clerk", "doc", "nurse"))
    pid = use_cases.register_patient(
        use_cases.RegisterPatient("Olive", "Order", date(1950, 1, 1), sex="female"),
        UnitOfWork(his_store),
        actor=clerk,
    ).patient_id
    use_cases.admit_patient(
        use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"), UnitOfWork(his_store), actor=clerk
    )
    use_cases.add_allergy(
        use_cases.AddAllergy(
            pid, allergen_code="PENICILLINS", reaction="rash", severity="moderate"
        ),
        UnitOfWork(his_store),
        actor=doc,
    )
    order = use_cases.place_order(
        use_cases.PlaceOrder(
            pid,
            "medication",
            medication_code="AMOX",
            dose=Decimal("500"),
            unit="mg",
            route="PO",
            frequency="Q8H",
            first_dose="now",  # a dose time at the start: the dose given now closes it
            note=NOTE,
            overrides={"allergy-conflict": "Tolerated amoxicillin in 2024"},
        ),
        UnitOfWork(his_store),
        actor=doc,
    )
    oid = order.order_id
    use_cases.progress_order(
        use_cases.ProgressOrder(pid, oid, "ready"), UnitOfWork(his_store), actor=nurse
    )
    use_cases.administer(
        use_cases.Administer(pid, oid, dose=Decimal("500"), unit="mg", note="Swallowed well"),
        UnitOfWork(his_store),
        actor=nurse,
    )
    return {"pid": pid, "oid": oid, "url": f"/admin/patients/{pid}/orders/{oid}/"}


def text(html: str) -> str:
    """The page as read: no tags, no styles or scripts, whitespace folded."""
    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r"<[^>]+>", " ", html)
    return " ".join(html.replace("&nbsp;", " ").split())


def section(html: str, element_id: str) -> str:
    match = re.search(
        rf'<div class="module" id="{element_id}".*?(?=<div class="module"|\Z)', html, re.S
    )
    assert match, element_id
    return text(match.group(0))


def test_it_shows_every_field_of_the_order_in_words(staff, placed) -> None:
    r = login(staff["nurse"]).get(placed["url"])
    assert r.status_code == 200
    html = r.content.decode()
    fields = section(html, "order-fields")
    for said in (
        "Medication order",
        "Amoxicillin 500 mg PO Q8H",
        "In progress",
        "Routine",
        "Amoxicillin",
        "500 milligram",
        "Oral",
        "Every 8 hours",
        NOTE,
        "by Meredith Grey",
        "Internal Medicine",
        "Medical Ward 1",
        placed["oid"],
    ):
        assert said in fields, said
    assert 'id="patient-banner"' in html and "ORDER, Olive" in html


def test_it_shows_the_override_the_administration_and_the_history(staff, placed) -> None:
    html = login(staff["doc"]).get(placed["url"]).content.decode()
    overrides = section(html, "order-overrides")
    assert "Allergy" in overrides and "Tolerated amoxicillin in 2024" in overrides
    assert "Meredith Grey" in overrides and "allergy-conflict" not in overrides
    given = section(html, "order-administrations")
    assert "Given" in given and "500 milligram" in given and "Carla Espinosa" in given
    assert "Swallowed well" in given
    history = section(html, "order-history")
    assert (
        history.index("Medication prescribed")
        < history.index("Order ready")
        < history.index("Dose given")
    )
    assert "overrode the allergy check: Tolerated amoxicillin in 2024" in history
    assert "Meredith Grey" in history and "Carla Espinosa" in history
    assert "Allergy recorded" not in history  # only this order's events


def test_the_chart_links_each_order_to_its_page_and_shows_its_note(staff, placed) -> None:
    html = login(staff["clerk"]).get(f"/admin/patients/{placed['pid']}/").content.decode()
    orders = section(html, "orders")
    assert f'href="{placed["url"]}"' in html
    assert f"Note: {NOTE}" in orders
    assert "Overrode the allergy check: “Tolerated amoxicillin in 2024” — Meredith Grey" in orders
    assert "In progress" in orders and "in_progress" not in orders


def test_the_audit_trail_names_the_order_and_the_actor_by_full_name(staff, placed) -> None:
    html = login(staff["doc"]).get(f"/admin/patients/{placed['pid']}/").content.decode()
    rows = re.findall(r'<tr class="audit-row".*?</tr>', html, re.S)
    by_type = {re.search(r'data-type="(\w+)"', row).group(1): row for row in rows}
    ready = by_type["OrderReady"]
    assert f'href="{placed["url"]}"' in ready and "Amoxicillin 500 mg PO Q8H" in ready
    assert "Order ready" in text(ready) and "Carla Espinosa" in text(ready)
    assert "Dose given" in text(by_type["MedicationAdministered"])
    assert f'href="{placed["url"]}"' in by_type["MedicationAdministered"]
    assert "Meredith Grey, " in section(html, "allergies")  # who recorded it, by name
    allergy = text(by_type["AllergyAdded"])
    assert "Allergy to Penicillins" in allergy and "Meredith Grey" in allergy
    admitted = text(by_type["AdmissionStarted"])
    assert (
        "Admitted to Internal Medicine / Medical Ward 1: Pneumonia" in admitted
        and "Cole Desk" in admitted
    )
    assert "OrderReady" not in text(html) and "MedicationPrescribed" not in text(html)


def test_the_medication_record_links_to_the_order(staff, placed) -> None:
    html = login(staff["nurse"]).get(f"/admin/patients/{placed['pid']}/mar/").content.decode()
    assert f'href="{placed["url"]}"' in html


def test_a_lab_order_page_shows_its_results(staff, placed, his_store) -> None:
    pid, doc = placed["pid"], actor_for(staff["doc"])
    lab = use_cases.place_order(
        use_cases.PlaceOrder(pid, "lab", test_code="CRP", urgency="stat"),
        UnitOfWork(his_store),
        actor=doc,
    ).order_id
    use_cases.progress_order(
        use_cases.ProgressOrder(pid, lab, "start"),
        UnitOfWork(his_store),
        actor=actor_for(staff["nurse"]),
    )
    use_cases.progress_order(
        use_cases.ProgressOrder(pid, lab, "complete", results=(GivenValue("CRP", "42"),)),
        UnitOfWork(his_store),
        actor=actor_for(staff["nurse"]),
    )
    use_cases.acknowledge_result(
        use_cases.AcknowledgeResult(pid, lab), UnitOfWork(his_store), actor=doc
    )
    html = login(staff["doc"]).get(f"/admin/patients/{pid}/orders/{lab}/").content.decode()
    fields = section(html, "order-fields")
    assert "Lab test order" in fields and "Completed" in fields and "STAT" in fields
    assert "Note —" in fields  # no note given
    results = section(html, "results")
    assert "C-reactive protein" in results and "42" in results and "high" in results
    assert "by Carla Espinosa" in results and "Acknowledged by Meredith Grey" in results
    assert "Results recorded" in section(html, "order-history")
    assert "Results reviewed" in section(html, "order-history")
    assert 'id="order-administrations"' not in html


def test_an_unknown_order_or_another_patients_order_is_not_found(staff, placed, his_store) -> None:
    client = login(staff["doc"])
    other = use_cases.register_patient(
        use_cases.RegisterPatient("Ned", "Other", date(1960, 1, 1)),
        UnitOfWork(his_store),
        actor=actor_for(staff["clerk"]),
    ).patient_id
    assert client.get(f"/admin/patients/{placed['pid']}/orders/nope/").status_code == 404
    assert client.get(f"/admin/patients/{other}/orders/{placed['oid']}/").status_code == 404
    assert client.get(f"/admin/patients/missing/orders/{placed['oid']}/").status_code == 404
    assert client.get(f"/admin/patients/{placed['pid']}/orders/%2E%2E/").status_code == 404


def test_actions_on_the_order_page_follow_the_role(staff, placed) -> None:
    nurse = login(staff["nurse"]).get(placed["url"]).content.decode()
    clerk = login(staff["clerk"]).get(placed["url"]).content.decode()
    administer = f"/admin/patients/{placed['pid']}/orders/{placed['oid']}/administer/"
    assert administer in nurse and administer not in clerk
    assert Client().get(placed["url"]).status_code == 302  # to the login page


def test_the_attending_choices_are_clinicians_only(staff, placed) -> None:
    User.objects.create_superuser(
        "boss", password=TEST_PASSWORD, first_name="Ada", last_name="Admin"
    )
    html = login(staff["clerk"]).get(f"/admin/patients/{placed['pid']}/admit/").content.decode()
    choices = re.search(r'<select name="attending".*?</select>', html, re.S)
    assert choices, "the admit form offers an attending"
    assert "Meredith Grey" in choices.group(0)
    for not_clinician in ("Ada Admin", "boss", "Carla Espinosa", "Cole Desk"):
        assert not_clinician not in choices.group(0), not_clinician


def test_the_birth_date_help_speaks_of_the_picker(staff) -> None:
    html = login(staff["clerk"]).get("/admin/patients/register/").content.decode()
    assert 'type="date"' in html and "Pick it from the calendar" in html
    assert "YYYY-MM-DD" not in text(html)


def test_the_audit_trail_names_a_removed_allergy(staff, placed, his_store) -> None:
    chart = queries.chart(his_store, placed["pid"])
    allergy = chart["patient"]["allergies"][0]
    use_cases.remove_allergy(
        use_cases.RemoveAllergy(placed["pid"], allergy["allergyId"], reason="entered-in-error"),
        UnitOfWork(his_store),
        actor=actor_for(staff["doc"]),
    )
    html = login(staff["doc"]).get(f"/admin/patients/{placed['pid']}/").content.decode()
    row = next(
        r
        for r in re.findall(r'<tr class="audit-row".*?</tr>', html, re.S)
        if 'data-type="AllergyRemoved"' in r
    )
    said = text(row)
    assert "Allergy removed" in said and "Allergy to Penicillins" in said
    assert "removed: entered in error" in said and "Meredith Grey" in said
    assert "entered-in-error" not in text(html)


def test_codes_without_a_label_still_read_as_words() -> None:
    assert label({}, "in_progress") == "In progress"
    assert label({}, "care-home") == "Care home"
    assert label({}, "SomethingNew") == "Something new"
    assert label({"stat": "STAT"}, "stat") == "STAT" and label({}, None) == ""


@pytest.mark.parametrize("event_type", list(EventType))
def test_every_event_reads_without_error_even_with_its_fields_missing(event_type) -> None:
    assert isinstance(describe(event_type, {}), str)
    assert isinstance(describe(event_type, {"overrides": [{}], "flags": {"high": ["X"]}}), str)


def test_the_allergy_removal_page_names_severity_and_criticality(staff, placed, his_store) -> None:
    allergy = queries.chart(his_store, placed["pid"])["patient"]["allergies"][0]
    url = f"/admin/patients/{placed['pid']}/allergies/{allergy['allergyId']}/remove/"
    shown = text(login(staff["doc"]).get(url).content.decode())
    assert "Severity Moderate" in shown and "Criticality Unable to assess" in shown
    assert "unable-to-assess" not in shown
