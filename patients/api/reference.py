"""JSON API for coded reference data (``/api/v1/reference``): what order forms and clients
choose from. Read only, active entries only, snake_case keys; any clinical role may read."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema

from hisadmin.core import policy
from hisadmin.core.store import get_store
from patients.api.schemas import Problem
from patients.domain.checks import hard_limits
from patients.persistence import reference

router = Router(tags=["reference data"])
ERRORS = {401: Problem, 403: Problem}
Number = int | float


class MedicationOut(Schema):
    code: str
    name: str
    ingredients: list[str] = Field(description="Allergen codes of its active ingredients")
    classes: list[str] = Field(description="Allergen codes of its drug classes")
    routes: list[str] = Field(description="Route codes it may be given by")
    dose_unit: str | None = Field(description="Unit code doses and the limits are given in")
    max_single_dose: Number | None = Field(description="largest single dose, in dose_unit")
    max_daily_dose: Number | None = Field(description="largest dose in 24 hours, in dose_unit")
    hard_max_single_dose: Number | None = Field(
        description="hard limit of a single dose, in dose_unit: no override passes it "
        "(422 dose-hard-limit); twice max_single_dose when the entry sets none")
    hard_max_daily_dose: Number | None = Field(
        description="hard limit in 24 hours, in dose_unit: no override passes it; twice "
        "max_daily_dose when the entry sets none")
    prn_min_interval_hours: Number | None = Field(
        description="least hours between two as-needed doses")


class AllergenOut(Schema):
    code: str
    name: str
    kind: str = Field(description="ingredient | drug_class | food | environment | other")


class AnalyteOut(Schema):
    code: str
    name: str
    unit: str = Field(description="Unit code results are given in")
    low: Number | None = Field(description="reference range, low end")
    high: Number | None = Field(description="reference range, high end")


class LabTestOut(Schema):
    code: str
    name: str
    analytes: list[AnalyteOut]


def medication_out(e: dict[str, Any]) -> dict[str, Any]:
    """A medication as the API shows it, with the hard limits that apply (stored, or twice
    the maximum)."""
    hard_single, hard_daily = hard_limits(e)
    return {"code": e["code"], "name": e["name"], "ingredients": e.get("ingredients", []),
            "classes": e.get("classes", []), "routes": e.get("routes", []),
            "dose_unit": e.get("doseUnit"), "max_single_dose": e.get("maxSingleDose"),
            "max_daily_dose": e.get("maxDailyDose"),
            "hard_max_single_dose": _number(hard_single),
            "hard_max_daily_dose": _number(hard_daily),
            "prn_min_interval_hours": e.get("prnMinIntervalHours")}


def _number(value: Decimal | None) -> Number | None:
    """A limit as a JSON number (an int when whole)."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def allergen_out(e: dict[str, Any]) -> dict[str, Any]:
    return {"code": e["code"], "name": e["name"], "kind": e.get("kind", "other")}


def lab_test_out(e: dict[str, Any]) -> dict[str, Any]:
    return {"code": e["code"], "name": e["name"],
            "analytes": [{"code": a["code"], "name": a["name"], "unit": a["unit"],
                          "low": a.get("low"), "high": a.get("high")}
                         for a in e.get("analytes", [])]}


@router.get("/medications", response={200: list[MedicationOut], **ERRORS},
            summary="Medications that may be ordered")
def medications(request: HttpRequest) -> list[dict[str, Any]]:
    """Active medications by code, with their ingredients and classes (Allergen codes), routes,
    dose unit and dose limits (standard adult product information)."""
    policy.require(request.user, "read_reference")
    return [medication_out(e) for e in reference.active(get_store(), "Medication")]


@router.get("/allergens", response={200: list[AllergenOut], **ERRORS},
            summary="Allergens an allergy may be recorded against")
def allergens(request: HttpRequest) -> list[dict[str, Any]]:
    """Active allergens by code: ingredients and drug classes the medications name, and
    non-drug allergens (food, environment, other)."""
    policy.require(request.user, "read_reference")
    return [allergen_out(e) for e in reference.active(get_store(), "Allergen")]


@router.get("/lab-tests", response={200: list[LabTestOut], **ERRORS},
            summary="Lab tests with their analytes")
def lab_tests(request: HttpRequest) -> list[dict[str, Any]]:
    """Active lab tests by code, each analyte with its unit (a Unit code) and its adult
    reference range."""
    policy.require(request.user, "read_reference")
    return [lab_test_out(e) for e in reference.active(get_store(), "LabTest")]
