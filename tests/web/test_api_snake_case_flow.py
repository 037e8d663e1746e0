"""A whole stay through /api/v1, every answer read for camelCase keys: registration,
admission, allergies, a PRN medication given and not given, a lab order resulted and
acknowledged, a transfer and a discharge, with the reads of the chart, MAR, results, audit
trail and worklists after each."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
CAMEL = re.compile(r"[a-z][A-Z]")
PRN = {"kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
       "route": "PO", "frequency": "Q6H", "as_needed": True}
CBC = [{"analyte_code": "HGB", "value": 120}, {"analyte_code": "WBC", "value": "7.5"},
       {"analyte_code": "PLT", "value": 450}]


def camel_keys(value: Any, path: str = "") -> list[str]:
    """Where ``value`` has a camelCase key, as dotted paths."""
    if isinstance(value, dict):
        return [f"{path}.{k}" for k in value if CAMEL.search(str(k))] + [
            p for k, v in value.items() for p in camel_keys(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in camel_keys(v, f"{path}[{i}]")]
    return []


def test_it_finds_a_camel_case_key_at_any_depth() -> None:
    assert camel_keys({"a": [{"b_c": {"unitName": 1}}]}) == [".a[0].b_c.unitName"]


def test_every_answer_of_a_whole_stay_is_snake_case(
    team: dict[str, Client], drain_worklists: Callable[[], int]
) -> None:
    clerk, doc, nurse = team["clerk"], team["doc"], team["nurse"]
    seen: dict[str, list[str]] = {}

    def call(client: Client, method: str, path: str, body: dict | None = None,
             ok: tuple[int, ...] = (200, 201)) -> Any:
        r = (getattr(client, method)(path, body, content_type=J) if body is not None
             else getattr(client, method)(path))
        assert r.status_code in ok, (method, path, r.content)
        answer = r.json()
        if found := camel_keys(answer):
            seen[f"{method.upper()} {path}"] = found
        return answer

    pid = call(clerk, "post", "/api/v1/patients", {
        "given_name": "Ann", "family_name": "Snake", "birth_date": "1955-02-02"})["id"]
    p = f"/api/v1/patients/{pid}"
    call(clerk, "post", f"{p}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                            "bed": "", "reason": "Pneumonia"})
    call(doc, "post", f"{p}/allergies", {"allergen_code": "PENICILLINS", "severity": "mild"})
    med = call(doc, "post", f"{p}/orders", PRN)["order_id"]
    call(nurse, "post", f"{p}/orders/{med}/ready", {})
    call(nurse, "post", f"{p}/orders/{med}/administrations", {"dose": "1000", "unit": "mg"})
    call(nurse, "post", f"{p}/orders/{med}/administrations",
         {"status": "not_given", "reason": "patient-refused"}, ok=(201, 409, 422))
    lab = call(doc, "post", f"{p}/orders", {"kind": "lab", "test_code": "CBC"})["order_id"]
    for action in ("ready", "start"):
        call(nurse, "post", f"{p}/orders/{lab}/{action}", {})
    call(nurse, "post", f"{p}/orders/{lab}/complete", {"results": CBC})
    call(doc, "post", f"{p}/orders/{lab}/acknowledge", {})
    call(clerk, "post", f"{p}/transfer", {"ward_id": "MED-2", "bed": ""})
    drain_worklists()
    for path in (p, f"{p}/orders", f"{p}/orders/{med}", f"{p}/orders/{lab}", f"{p}/events",
                 f"{p}/admissions", f"{p}/mar", f"{p}/results",
                 "/api/v1/worklists/orders?department=MED",
                 "/api/v1/worklists/admitted?department=MED",
                 "/api/v1/worklists/medications-due?ward=MED-2",
                 "/api/v1/worklists/results-to-review",
                 "/api/v1/worklists/patients?q=Snake"):
        call(doc if "results-to-review" in path else nurse, "get", path)
    call(clerk, "post", f"{p}/discharge", {"disposition": "home"})
    call(clerk, "get", f"{p}/events")
    assert seen == {}
