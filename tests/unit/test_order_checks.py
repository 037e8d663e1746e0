"""Order checks (allergy, dose, duplicate) and overrides, plain Python with dict fixtures."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from patients.domain import checks
from patients.domain.checks import Conflict, check_order, clean_overrides, unresolved
from patients.domain.errors import InvalidInput, OrderConflicts
from patients.domain.orders import Order

UNITS = {"mg": {"code": "mg", "name": "milligram", "dimension": "mass", "factor": 0.001},
         "g": {"code": "g", "name": "gram", "dimension": "mass", "factor": 1},
         "mcg": {"code": "mcg", "name": "microgram", "dimension": "mass", "factor": 0.000001},
         "ml": {"code": "ml", "name": "millilitre", "dimension": "volume", "factor": 0.001}}
FREQ = {"Q6H": {"code": "Q6H", "name": "Every 6 hours", "hours": 6},
        "Q8H": {"code": "Q8H", "name": "Every 8 hours", "hours": 8},
        "ONCE": {"code": "ONCE", "name": "Once", "hours": 0}}
AMOX = {"code": "AMOX", "name": "Amoxicillin", "ingredients": ["amoxicillin"],
        "classes": ["penicillins", "beta-lactams"], "routes": ["PO", "IV"], "doseUnit": "mg",
        "maxSingleDose": 1000, "maxDailyDose": 3000}
PARA = {"code": "PARA", "name": "Paracetamol", "ingredients": ["paracetamol"],
        "classes": ["analgesics"], "routes": ["PO", "IV"], "doseUnit": "mg",
        "maxSingleDose": 1000, "maxDailyDose": 4000, "prnMinIntervalHours": 4}
NAMES = {"amoxicillin": "Amoxicillin", "penicillins": "Penicillins",
         "beta-lactams": "Beta-lactam antibiotics", "paracetamol": "Paracetamol",
         "analgesics": "Analgesics", "peanut": "Peanut"}


def allergy(code: str | None, substance: str, *, reaction: str = "hives",
            severity: str = "severe", status: str = "active",
            checkable: bool | None = None) -> dict[str, Any]:
    return {"allergyId": f"al-{substance}", "allergenCode": code, "substance": substance,
            "checkable": bool(code) if checkable is None else checkable, "reaction": reaction,
            "severity": severity, "criticality": "high", "status": status}


def order(kind: str, status: str = "created", **details: Any) -> Order:
    o = Order.place(kind=kind, urgency="routine", order_id=f"o-{kind}-{status}", patient_id="p",
                    admission_id="a1", description=f"{kind} {details}", department_id="MED",
                    ward_id="MED-1", placed_at="2026-01-02T03:04:00+00:00", placed_by="1",
                    details=details)
    o.status = status
    return o


def med_check(med: dict[str, Any] = AMOX, dose: str = "500", unit: str = "mg",
              freq: str = "Q8H", allergies: list[dict[str, Any]] | None = None,
              active: list[Order] | None = None) -> list[Conflict]:
    return check_order("medication", {"medicationCode": med["code"]},
                       allergies=allergies or [], active_orders=active or [], medication=med,
                       dose=Decimal(dose), unit=UNITS[unit], dose_unit=UNITS[med["doseUnit"]],
                       frequency=FREQ[freq], allergen_names=NAMES)


def types(conflicts: list[Conflict]) -> list[str]:
    return [c.type for c in conflicts]


# ------------------------------------------------------------------ allergy
def test_a_safe_order_passes_every_check() -> None:
    assert med_check() == []


def test_a_coded_allergy_to_a_drug_class_conflicts_naming_allergy_and_reaction() -> None:
    [c] = med_check(allergies=[allergy("penicillins", "Penicillins", reaction="anaphylaxis")])
    assert c.type == "allergy-conflict"
    assert "Penicillins" in c.detail and "anaphylaxis" in c.detail
    assert "Amoxicillin" in c.detail


def test_a_coded_allergy_to_an_ingredient_conflicts() -> None:
    assert types(med_check(allergies=[allergy("amoxicillin", "Amoxicillin")])) == [
        "allergy-conflict"]


def test_removed_and_unrelated_coded_allergies_do_not_conflict() -> None:
    assert med_check(allergies=[allergy("penicillins", "Penicillins", status="removed"),
                                allergy("peanut", "Peanut"),
                                allergy("paracetamol", "Paracetamol")]) == []


@pytest.mark.parametrize("text", ["amoxicillin", "AMOXICILLIN rash", "Amoxicíllin?",
                                  "allergic to amoxicillin (2019)", "penicillin",
                                  "PÉNICILLINS", "beta lactam antibiotic"])
def test_a_free_text_allergy_naming_the_drug_an_ingredient_or_class_conflicts(text: str) -> None:
    [c] = med_check(allergies=[allergy(None, text)])
    assert c.type == "allergy-conflict"
    assert text in c.detail and "free text" in c.detail


@pytest.mark.parametrize("text", ["amox", "latex", "sulfa drugs", "cillin"])
def test_free_text_that_does_not_name_the_drug_does_not_conflict(text: str) -> None:
    assert med_check(allergies=[allergy(None, text)]) == []


def test_an_allergy_stored_before_coding_reads_as_free_text() -> None:
    old = {"allergyId": "x", "substance": "Penicillin", "reaction": "rash",
           "severity": "moderate"}
    [c] = med_check(allergies=[old])
    assert "Penicillin" in c.detail and "rash" in c.detail


def test_a_coded_allergy_marked_not_checkable_is_matched_by_its_text() -> None:
    assert types(med_check(allergies=[allergy("other", "amoxicillin", checkable=False)])) == [
        "allergy-conflict"]


def test_several_allergies_make_one_conflict_naming_each() -> None:
    [c] = med_check(allergies=[allergy("penicillins", "Penicillins", reaction="anaphylaxis"),
                               allergy(None, "amoxicillin", reaction="rash")])
    assert "anaphylaxis" in c.detail and "rash" in c.detail


# ------------------------------------------------------------------ dose
def test_a_single_dose_above_the_maximum_states_the_limit() -> None:
    [c] = med_check(dose="1500")
    assert c.type == "dose-limit"
    assert "1000 mg" in c.detail and "single" in c.detail


def test_the_daily_dose_is_dose_times_doses_per_day() -> None:
    assert med_check(med=PARA, dose="1000", freq="Q6H") == []  # 4000 mg a day: the limit
    [c] = med_check(dose="1000", freq="Q6H")  # amoxicillin 4000 mg a day > 3000
    assert c.type == "dose-limit" and "3000 mg" in c.detail and "daily" in c.detail


def test_a_once_only_dose_counts_once_a_day() -> None:
    assert med_check(dose="1000", freq="ONCE") == []


def test_doses_in_another_unit_of_the_same_dimension_are_converted() -> None:
    assert med_check(dose="1", unit="g") == []  # 1 g = 1000 mg
    [c] = med_check(dose="1.5", unit="g")
    assert "1.5 g" in c.detail and "1500 mg" in c.detail
    assert med_check(dose="500000", unit="mcg") == []  # 500 mg


def test_a_unit_of_another_dimension_is_invalid_input_not_a_conflict() -> None:
    with pytest.raises(InvalidInput) as err:
        med_check(dose="5", unit="ml")
    assert err.value.http_status == 422 and err.value.field == "unit"


def test_a_medication_without_a_dose_unit_or_limits_is_not_dose_checked() -> None:
    legacy = {"code": "OLD", "name": "Old drug"}
    assert check_order("medication", {"medicationCode": "OLD"}, medication=legacy,
                       dose=Decimal("99999"), unit=UNITS["mg"], dose_unit=None,
                       frequency=FREQ["Q6H"]) == []


# ------------------------------------------------------------------ duplicate
def test_an_active_order_for_the_same_medication_is_a_duplicate_naming_it() -> None:
    same = order("medication", medicationCode="AMOX")
    [c] = med_check(active=[same, order("medication", "ready", medicationCode="PARA")])
    assert c.type == "duplicate-order" and same.description in c.detail


def test_ended_orders_are_not_duplicates() -> None:
    assert med_check(active=[order("medication", "completed", medicationCode="AMOX"),
                             order("medication", "cancelled", medicationCode="AMOX")]) == []


def test_the_same_lab_test_is_a_duplicate() -> None:
    active = [order("lab", testCode="TROP")]
    assert types(check_order("lab", {"testCode": "TROP"}, active_orders=active)) == [
        "duplicate-order"]
    assert check_order("lab", {"testCode": "CBC"}, active_orders=active) == []


def test_imaging_is_a_duplicate_for_the_same_modality_and_body_part() -> None:
    active = [order("imaging", "in_progress", modality="CT", bodyPart="HEAD")]
    assert types(check_order("imaging", {"modality": "CT", "bodyPart": "HEAD"},
                             active_orders=active)) == ["duplicate-order"]
    assert check_order("imaging", {"modality": "CT", "bodyPart": "CHEST"},
                       active_orders=active) == []
    assert check_order("imaging", {"modality": "XR", "bodyPart": "HEAD"},
                       active_orders=active) == []


# ------------------------------------------------------------------ all, and overrides
def test_every_failed_check_is_listed_allergy_dose_duplicate() -> None:
    found = med_check(dose="2000", allergies=[allergy("penicillins", "Penicillins")],
                      active=[order("medication", medicationCode="AMOX")])
    assert types(found) == ["allergy-conflict", "dose-limit", "duplicate-order"]


def test_each_override_alone_is_not_enough_for_two_conflicts() -> None:
    found = med_check(allergies=[allergy("penicillins", "Penicillins")],
                      active=[order("medication", medicationCode="AMOX")])
    assert types(unresolved(found, {"allergy-conflict": "benefit outweighs"})) == [
        "duplicate-order"]
    assert types(unresolved(found, {"duplicate-order": "second course"})) == [
        "allergy-conflict"]
    assert types(unresolved(found, {"allergy-conflict": " ", "duplicate-order": "x"})) == [
        "allergy-conflict", "duplicate-order"]  # an empty or one-letter reason is no reason
    assert unresolved(found, {"allergy-conflict": "tolerated it last year",
                              "duplicate-order": "second course agreed"}) == []


def test_overrides_are_keyed_by_known_check_types() -> None:
    assert clean_overrides({"allergy_conflict": "  tolerated  before ", "prn-interval": ""}) == {
        "allergy-conflict": "tolerated before", "dose-interval": ""}
    with pytest.raises(InvalidInput) as err:
        clean_overrides({"allergy": "x"})
    assert err.value.http_status == 422 and err.value.field == "overrides"


def test_the_refusal_carries_every_conflict_and_the_first_unresolved_type() -> None:
    found = [Conflict("allergy-conflict", "A."), Conflict("duplicate-order", "D.")]
    err = OrderConflicts(found, first="duplicate-order")
    assert err.http_status == 409 and err.problem_type == "duplicate-order"
    assert err.extra["conflicts"] == [{"type": "allergy-conflict", "detail": "A."},
                                      {"type": "duplicate-order", "detail": "D."}]
    assert checks.CHECK_TYPES[:4] == ("allergy-status-unknown", "allergy-conflict", "dose-limit",
                                      "duplicate-order")


# ------------------------------------------------------------------ override reasons
@pytest.mark.parametrize("reason", ["", "x", "ok", "overridden", "xxxxxxxxxxxxxxxxxx",
                                    "- - - - - - - -", "a b"])
def test_it_refuses_a_reason_shorter_than_ten_characters_or_two_words(reason: str) -> None:
    assert checks.reason_problem(reason) is not None


@pytest.mark.parametrize("reason", ["Patient unconscious", "tolerated it last year",
                                    "  second   course "])
def test_it_takes_a_reason_of_two_words_and_ten_characters(reason: str) -> None:
    assert checks.reason_problem(reason) is None


def test_a_refused_reason_says_why_in_the_conflict() -> None:
    found = [Conflict("allergy-conflict", "A."), Conflict("duplicate-order", "D.")]
    said = checks.answered(found, {"allergy-conflict": "x"})
    err = OrderConflicts(said, first="allergy-conflict")
    first, second = err.extra["conflicts"]
    assert "10 characters" in first["reason_refused"] and "reason_refused" not in second


def test_a_reason_under_the_old_prn_interval_key_answers_dose_interval() -> None:
    assert clean_overrides({"prn_interval": "pain score nine of ten"}) == {
        "dose-interval": "pain score nine of ten"}


# ------------------------------------------------------------------ allergy status
def test_a_medication_for_a_patient_never_asked_about_allergies_conflicts() -> None:
    found = check_order("medication", {"medicationCode": "PARA"}, medication=PARA,
                        allergy_status="unknown")
    assert types(found) == ["allergy-status-unknown"]
    assert "not yet asked" in found[0].detail


@pytest.mark.parametrize("status", ["no_known_allergies", "has_allergies", None])
def test_a_known_allergy_status_passes(status: str | None) -> None:
    assert check_order("medication", {"medicationCode": "PARA"}, medication=PARA,
                       allergy_status=status) == []


def test_a_lab_or_imaging_order_needs_no_allergy_history() -> None:
    assert check_order("lab", {"testCode": "FBC"}, allergy_status="unknown") == []


# ------------------------------------------------------------------ hard limits
def test_hard_limits_default_to_twice_the_maximum() -> None:
    assert checks.hard_limits(PARA) == (Decimal(2000), Decimal(8000))
    assert checks.hard_limits({**PARA, "hardMaxSingleDose": 1500, "hardMaxDailyDose": 6000}
                              ) == (Decimal(1500), Decimal(6000))
    assert checks.hard_limits({"code": "X"}) == (None, None)


def test_a_prescribed_dose_above_the_hard_single_limit_is_a_hard_stop() -> None:
    ibu = {"code": "IBU", "name": "Ibuprofen", "doseUnit": "mg", "maxSingleDose": 800,
           "maxDailyDose": 2400}
    why = checks.prescribing_hard_limit(ibu, Decimal(10), UNITS["g"], UNITS["mg"],
                                        {"code": "Q4H", "hours": 4})
    assert why is not None and "10000 mg" in why and "1600 mg" in why


def test_a_prescribed_daily_total_above_the_hard_daily_limit_is_a_hard_stop() -> None:
    why = checks.prescribing_hard_limit(PARA, Decimal(1500), UNITS["mg"], UNITS["mg"],
                                        {"code": "Q4H", "hours": 4})
    assert why is not None and "9000 mg" in why and "8000 mg" in why
    assert checks.prescribing_hard_limit(PARA, Decimal(2000), UNITS["mg"], UNITS["mg"],
                                         FREQ["Q6H"]) is None  # at the limit: a warning only
    assert checks.prescribing_hard_limit(PARA, Decimal(1), UNITS["g"], None, FREQ["Q6H"]) is None
