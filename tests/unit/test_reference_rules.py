"""The rules coded reference data keeps, checked on plain entries."""

from __future__ import annotations

import pytest

from patients.domain.reference import InvalidReferenceEntry, check_all, check_entry

CODES = {"Allergen": {"AMOXICILLIN", "PENICILLINS"}, "Unit": {"mg", "g_l"},
         "Route": {"PO", "IV"}}
AMOX = {"code": "AMOX", "name": "Amoxicillin", "ingredients": ["AMOXICILLIN"],
        "classes": ["PENICILLINS"], "routes": ["PO", "IV"], "doseUnit": "mg",
        "maxSingleDose": 1000, "maxDailyDose": 3000, "prnMinIntervalHours": 4,
        "source": "product information"}


def test_a_consistent_medication_passes() -> None:
    check_entry("Medication", AMOX, CODES)


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"classes": ["PENICILINS"]}, "classes", "'PENICILINS' is not an Allergen code"),
    ({"ingredients": "AMOXICILLIN"}, "ingredients", "list of codes"),
    ({"routes": ["PO", "NG"]}, "routes", "not a Route code"),
    ({"routes": []}, "routes", "at least one route"),
    ({"doseUnit": "spoon"}, "doseUnit", "not a Unit code"),
    ({"maxSingleDose": "1000"}, "maxSingleDose", "a number"),
    ({"maxSingleDose": True}, "maxSingleDose", "a number"),
    ({"maxDailyDose": 500}, "maxDailyDose", "below the single-dose"),
    ({"prnMinIntervalHours": -1}, "prnMinIntervalHours", "greater than zero"),
    ({"source": " "}, "source", "where the dose limits come from"),
    ({"code": "A/B"}, "code", "may not contain"),
])
def test_a_broken_medication_is_named_with_its_field(change, field, words) -> None:
    with pytest.raises(InvalidReferenceEntry) as refused:
        check_entry("Medication", {**AMOX, **change}, CODES)
    assert refused.value.field == field and refused.value.http_status == 422
    assert words in str(refused.value) and "Medication" in str(refused.value)


@pytest.mark.parametrize(("type_name", "entry", "field"), [
    ("Allergen", {"code": "X", "name": "X", "kind": "plant"}, "kind"),
    ("Unit", {"code": "x", "name": "x", "dimension": "mass", "factor": 0}, "factor"),
    ("Unit", {"code": "x", "name": "x", "factor": 1}, "dimension"),
    ("Frequency", {"code": "F", "name": "F", "hours": -2}, "hours"),
    ("LabTest", {"code": "T", "name": "T", "analytes": []}, "analytes"),
    ("LabTest", {"code": "T", "name": "T", "analytes": [
        {"code": "A", "name": "A", "unit": "g/l", "low": 1, "high": 2}]}, "analytes.A.unit"),
    ("LabTest", {"code": "T", "name": "T", "analytes": [
        {"code": "A", "name": "A", "unit": "g_l", "low": 3, "high": 2}]}, "analytes.A.high"),
    ("LabTest", {"code": "T", "name": "T", "analytes": [
        {"code": "A", "name": "A", "unit": "g_l", "low": 1, "high": 2},
        {"code": "A", "name": "B", "unit": "g_l", "low": 1, "high": 2}]}, "analytes.A"),
])
def test_other_types_keep_their_rules(type_name, entry, field) -> None:
    with pytest.raises(InvalidReferenceEntry) as refused:
        check_entry(type_name, entry, CODES)
    assert refused.value.field == field


def test_a_set_resolves_its_references_within_itself() -> None:
    allergens = [("Allergen", {"code": c, "name": c, "kind": "drug_class"})
                 for c in ("AMOXICILLIN", "PENICILLINS")]
    rest = [("Unit", {"code": "mg", "name": "mg", "dimension": "mass", "factor": 1}),
            ("Route", {"code": "PO", "name": "Oral"}), ("Route", {"code": "IV", "name": "IV"})]
    check_all([*allergens, *rest, ("Medication", AMOX)])
    with pytest.raises(InvalidReferenceEntry, match="appears twice"):
        check_all([*allergens, *rest, ("Route", {"code": "PO", "name": "By mouth"})])
    with pytest.raises(InvalidReferenceEntry, match="not an Allergen code"):
        check_all([*rest, ("Medication", AMOX)])


def test_a_medications_hard_limits_sit_at_or_above_its_maximums() -> None:
    from patients.domain.reference import InvalidReferenceEntry, check_entry

    codes = {"Allergen": {"PARACETAMOL"}, "Route": {"PO"}, "Unit": {"mg"}}
    med = {"code": "PARA", "name": "Paracetamol", "ingredients": ["PARACETAMOL"],
           "classes": [], "routes": ["PO"], "doseUnit": "mg", "maxSingleDose": 1000,
           "maxDailyDose": 4000, "source": "BNF"}
    check_entry("Medication", med, codes)
    check_entry("Medication", {**med, "hardMaxSingleDose": 1500, "hardMaxDailyDose": 5000},
                codes)
    for bad, field in (({"hardMaxSingleDose": 900}, "hardMaxSingleDose"),
                       ({"hardMaxDailyDose": 3000}, "hardMaxDailyDose"),
                       ({"hardMaxSingleDose": 0}, "hardMaxSingleDose"),
                       ({"hardMaxSingleDose": 5000, "hardMaxDailyDose": 4500},
                        "hardMaxDailyDose")):
        try:
            check_entry("Medication", {**med, **bad}, codes)
        except InvalidReferenceEntry as exc:
            assert exc.field == field
        else:
            raise AssertionError(f"{bad} passed")
