"""Coded reference data: the shipped files load (idempotently), hang together, a bad file
changes nothing, admin edits keep the same rules, and doses convert between units."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from bench.workload import MEDICATIONS
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.demo import DEMO_ORDERS
from patients.domain import reference as rules
from patients.domain.errors import InvalidInput, UnitMismatch
from patients.domain.units import convert, doses_per_day
from patients.persistence import reference

pytestmark = pytest.mark.service


def load(store) -> list[tuple[str, str, str]]:
    return list(use_cases.load_reference_data(UnitOfWork(store), actor=SYSTEM_ACTOR))


def test_it_loads_the_coded_reference_data_once(his_store) -> None:
    first = load(his_store)
    assert {outcome for *_, outcome in first} == {"created"}
    assert {outcome for *_, outcome in load(his_store)} == {"unchanged"}
    meds = reference.all_of(his_store, "Medication")
    assert len(meds) >= 20
    assert {"PARA", "IBU", "AMOX", "FURO", "ENOX", "MORPH", "METF", "INSUL"} <= set(meds)
    amox = meds["AMOX"]
    assert amox["ingredients"] == ["AMOXICILLIN"]
    assert {"PENICILLINS", "BETA_LACTAMS"} <= set(amox["classes"])
    assert amox["doseUnit"] == "mg" and "defaultUnit" not in amox
    assert isinstance(amox["maxSingleDose"], int) and amox["source"]
    allergens = reference.all_of(his_store, "Allergen")
    for code in ("LATEX", "PEANUT", "EGG", "SHELLFISH", "IODINATED_CONTRAST", "PENICILLINS"):
        assert code in allergens
    assert allergens["PENICILLINS"] == {"code": "PENICILLINS", "name": "Penicillins",
                                        "kind": "drug_class", "active": True}
    units = reference.all_of(his_store, "Unit")
    assert units["g"]["dimension"] == "mass" and units["g"]["factor"] == 1000
    assert {"mg", "g", "mcg", "ml", "l", "units", "tablet"} <= set(units)
    cbc = reference.all_of(his_store, "LabTest")["CBC"]
    assert [a["code"] for a in cbc["analytes"]] == ["HGB", "WBC", "PLT"]
    assert cbc["analytes"][0] == {"code": "HGB", "name": "Haemoglobin", "unit": "g_l",
                                  "low": 130, "high": 175}


def test_every_shipped_reference_resolves() -> None:
    shipped = list(reference.entries_from_files())
    rules.check_all(shipped)  # raises on the first broken rule
    codes: dict[str, set[str]] = {}
    for type_name, entry in shipped:
        codes.setdefault(type_name, set()).add(entry["code"])
    for type_name, entry in shipped:
        if type_name == "Medication":
            assert set(entry["ingredients"]) | set(entry["classes"]) <= codes["Allergen"]
            assert entry["doseUnit"] in codes["Unit"]
            assert set(entry["routes"]) <= codes["Route"]
        if type_name == "LabTest":
            assert all(a["unit"] in codes["Unit"] for a in entry["analytes"])


def test_the_demo_and_benchmark_doses_are_within_the_limits(his_store) -> None:
    load(his_store)
    meds = reference.all_of(his_store, "Medication")
    units = reference.all_of(his_store, "Unit")
    frequencies = reference.all_of(his_store, "Frequency")
    orders = [(code, unit, route, freq, Decimal(dose)) for code, unit, route, freq, dose
              in MEDICATIONS]
    orders += [(o["medication_code"], o["unit"], o["route"], o["frequency"], o["dose"])
               for ward in DEMO_ORDERS.values() for o in ward if o["kind"] == "medication"]
    orders += [("PARA", "mg", "PO", "Q6H", Decimal(1000)), ("PARA", "g", "PO", "Q8H", Decimal(1)),
               ("ENOX", "mg", "SC", "Q24H", Decimal(40))]  # driver, tests, browser flow
    for code, unit, route, freq, dose in orders:
        med = meds[code]
        amount = convert(dose, units[unit], units[med["doseUnit"]])
        assert route in med["routes"], (code, route)
        assert amount <= med["maxSingleDose"], (code, dose)
        assert amount * doses_per_day(frequencies[freq]) <= med["maxDailyDose"], (code, freq)


def _bad_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, type_name: str, code: str,
               **change: object) -> None:
    for source in reference.DATA_DIR.glob("*.json"):
        entries = json.loads(source.read_text())
        if source.stem == type_name:
            entries = [{**e, **change} if e["code"] == code else e for e in entries]
        (tmp_path / source.name).write_text(json.dumps(entries))
    monkeypatch.setattr(reference, "DATA_DIR", tmp_path)


@pytest.mark.parametrize(("type_name", "code", "change", "field"), [
    ("Medication", "AMOX", {"classes": ["PENICILINS"]}, "classes"),
    ("Medication", "PARA", {"doseUnit": "spoon"}, "doseUnit"),
    ("Medication", "IBU", {"routes": ["PO", "NASAL"]}, "routes"),
    ("Medication", "IBU", {"maxSingleDose": "800"}, "maxSingleDose"),
    ("Allergen", "LATEX", {"kind": "rubber"}, "kind"),
    ("Unit", "g", {"factor": 0}, "factor"),
    ("LabTest", "CRP", {"analytes": [{"code": "CRP", "name": "CRP", "unit": "mg/dl",
                                      "low": 0, "high": 5}]}, "analytes.CRP.unit"),
])
def test_a_bad_file_stops_the_load_and_changes_nothing(his_store, tmp_path, monkeypatch,
                                                       type_name, code, change, field) -> None:
    load(his_store)
    before = his_store.count()
    _bad_files(tmp_path, monkeypatch, type_name, code, **change)
    shipped = json.loads((tmp_path / "Department.json").read_text())
    (tmp_path / "Department.json").write_text(json.dumps([*shipped, {"code": "NEW",
                                                                      "name": "New"}]))
    with pytest.raises(rules.InvalidReferenceEntry) as refused:
        load(his_store)
    assert refused.value.field == field
    message = str(refused.value)
    assert type_name in message and repr(code) in message and field in message
    assert his_store.count() == before
    assert his_store.try_read(keys.reference("Department"), "NEW") is None


def test_a_bad_file_on_an_empty_store_writes_nothing(his_store, tmp_path, monkeypatch) -> None:
    _bad_files(tmp_path, monkeypatch, "Medication", "MORPH", ingredients=["MORPHINE", "OPIUM"])
    with pytest.raises(InvalidInput, match="Medication 'MORPH', field 'ingredients'"):
        load(his_store)
    assert his_store.count() == 0


def test_admin_edits_keep_the_same_rules(his_store) -> None:
    load(his_store)

    def save(type_name: str, code: str, **fields: object) -> dict:
        return use_cases.save_reference_entry(use_cases.SaveReferenceEntry(
            type_name, code, dict(fields)), UnitOfWork(his_store), actor=SYSTEM_ACTOR)

    with pytest.raises(InvalidInput) as refused:
        save("Medication", "AMOX", classes=["PENICILLINS", "NOPE"])
    assert refused.value.field == "classes"
    assert "NOPE" in str(refused.value)
    saved = save("Medication", "AMOX", classes=["PENICILLINS", "BETA_LACTAMS"],
                 maxDailyDose=6000)
    assert saved["maxDailyDose"] == 6000
    assert reference.get(his_store, "Medication", "AMOX", field="x")["maxDailyDose"] == 6000
    with pytest.raises(InvalidInput) as refused:
        save("Unit", "mg", factor=-1)
    assert refused.value.field == "factor"


def test_doses_convert_within_a_dimension(his_store) -> None:
    load(his_store)
    units = reference.all_of(his_store, "Unit")
    assert convert(Decimal("1"), units["g"], units["mg"]) == 1000
    assert convert(Decimal("500"), units["mcg"], units["mg"]) == Decimal("0.5")
    assert convert(Decimal("0.5"), units["l"], units["ml"]) == 500
    assert convert(Decimal("140"), units["g_l"], units["mg_l"]) == 140000
    assert convert(Decimal("88"), units["umol_l"], units["mmol_l"]) == Decimal("0.088")
    with pytest.raises(UnitMismatch) as refused:
        convert(Decimal("5"), units["ml"], units["mg"])
    assert refused.value.http_status == 422 and refused.value.field == "unit"
    assert "millilitre" in str(refused.value) and "milligram" in str(refused.value)
    frequencies = reference.all_of(his_store, "Frequency")
    assert doses_per_day(frequencies["Q6H"]) == 4
    assert doses_per_day(frequencies["ONCE"]) == 1
