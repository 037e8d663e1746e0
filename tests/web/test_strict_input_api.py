"""Strict input at the API's edge: dates and times are ISO 8601 text (a naive one read in the
hospital's time zone), text refuses control and text-direction characters, every string has
a maximum length. A refusal is a 422 problem naming the field, and nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
PARA = {"kind": "medication", "medication_code": "PARA", "dose": "1", "unit": "g",
        "route": "PO", "frequency": "Q8H"}
PERSON = {"given_name": "Ana", "family_name": "Strict", "birth_date": "1980-01-01",
          "sex": "female"}
MEGABYTE = "2026-07-01T08:00:00" + "0" * 1_000_000


def fields_of(response: Any) -> list[str]:
    assert response.status_code == 422, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/problem+json")
    return [e["field"] for e in response.json()["errors"]]


@pytest.fixture
def patient(admit: Callable[..., str]) -> str:
    return admit("Strict")


def order(team: dict[str, Client], pid: str, **values: Any) -> Any:
    return team["doc"].post(f"/api/v1/patients/{pid}/orders", {**PARA, **values},
                            content_type=J)


@pytest.mark.parametrize("value", ["next tuesday", MEGABYTE, 1767254400, "1899-12-31T08:00",
                                   "2101-01-01T08:00", "2026-07-01 8am", ""])
def test_it_refuses_an_order_start_that_is_not_an_iso_time(
        team: dict[str, Client], patient: str, his_store, value: Any) -> None:
    before = his_store.count()
    assert fields_of(order(team, patient, start_at=value)) == ["start_at"]
    assert fields_of(order(team, patient, end_at=value)) == ["end_at"]
    assert his_store.count() == before


def test_it_reads_a_naive_start_in_the_hospital_time_zone(
        team: dict[str, Client], patient: str, settings) -> None:
    settings.HOSPITAL_TIME_ZONE = "Europe/Madrid"  # CEST in July: UTC+2
    r = order(team, patient, start_at="2026-07-01T08:00", end_at="2026-07-03T08:00:00")
    assert r.status_code == 201, r.content
    assert (r.json()["start_at"], r.json()["end_at"]) == (
        "2026-07-01T06:00:00+00:00", "2026-07-03T06:00:00+00:00")


@pytest.mark.parametrize(("given", "kept"), [
    ("2026-07-01T08:00:00.123456+05:30", "2026-07-01T02:30:00.123456+00:00"),
    ("2026-07-01T08:00:00Z", "2026-07-01T08:00:00+00:00"),
    ("2026-07-01T08:00:00-03:00", "2026-07-01T11:00:00+00:00"),
    ("2026-07-01", "2026-07-01T00:00:00+00:00"),
])
def test_it_keeps_an_offset_or_microseconds_as_an_instant_in_utc(
        team: dict[str, Client], patient: str, settings, given: str, kept: str) -> None:
    settings.HOSPITAL_TIME_ZONE = "UTC"
    r = order(team, patient, start_at=given)
    assert r.status_code == 201, r.content
    assert r.json()["start_at"] == kept


def test_it_refuses_an_end_before_the_start(team: dict[str, Client], patient: str) -> None:
    r = order(team, patient, start_at="2026-07-02T08:00+02:00", end_at="2026-07-02T07:59+02:00")
    assert fields_of(r) == ["end_at"]
    # the same wall time later in another zone is an earlier instant
    r = order(team, patient, start_at="2026-07-02T08:00+00:00", end_at="2026-07-02T09:00+02:00")
    assert fields_of(r) == ["end_at"]


@pytest.mark.parametrize("value", [0, 19800101, "1899-12-31", "2101-01-01", "01/02/1980",
                                   "1980-1-1", (date.today() + timedelta(days=2)).isoformat(),
                                   "1980-01-01T00:00:00", None])
def test_it_refuses_a_birth_date_that_is_not_a_past_iso_date(
        team: dict[str, Client], his_store, value: Any) -> None:
    before = his_store.count()
    r = team["clerk"].post("/api/v1/patients", {**PERSON, "birth_date": value},
                           content_type=J)
    assert fields_of(r) == ["birth_date"]
    assert his_store.count() == before


def test_it_accepts_a_birth_date_from_1900_to_today(team: dict[str, Client]) -> None:
    for day in ("1900-01-01", (date.today() - timedelta(days=1)).isoformat()):
        r = team["clerk"].post("/api/v1/patients", {**PERSON, "birth_date": day,
                                                    "given_name": f"Day{day}"},
                               content_type=J)
        assert r.status_code == 201, r.content
        assert r.json()["birth_date"] == day


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\u202e", "\u2066", "\n", "\x7f", "\x85"])
def test_it_refuses_control_and_direction_characters_in_names(
        team: dict[str, Client], patient: str, his_store, char: str) -> None:
    before = his_store.count()
    r = team["clerk"].post("/api/v1/patients", {**PERSON, "given_name": f"An{char}a"},
                           content_type=J)
    assert fields_of(r) == ["given_name"]
    assert f"U+{ord(char):04X}" in r.json()["errors"][0]["message"]
    etag = team["clerk"].get(f"/api/v1/patients/{patient}")["ETag"]
    r = team["clerk"].put(f"/api/v1/patients/{patient}", {**PERSON, "family_name": f"X{char}"},
                          content_type=J, HTTP_IF_MATCH=etag)
    assert fields_of(r) == ["family_name"]
    r = team["doc"].post(f"/api/v1/patients/{patient}/allergies",
                         {"substance": f"Latex{char}", "severity": "mild"}, content_type=J)
    assert fields_of(r) == ["substance"]
    assert his_store.count() == before


def test_a_note_may_have_lines_and_tabs_but_no_other_control_characters(
        team: dict[str, Client], patient: str) -> None:
    r = order(team, patient, note="Take with food.\r\n\tNot at night.")
    assert r.status_code == 201, r.content
    assert fields_of(order(team, patient, note="Take\x1b[31m with food")) == ["note"]
    assert fields_of(order(team, patient, note="Take \u202ewith food")) == ["note"]
    assert fields_of(order(team, patient, medication_code="PARA\n")) == ["medication_code"]


def test_it_refuses_bad_text_in_nested_fields_and_query_parameters(
        team: dict[str, Client], patient: str) -> None:
    r = order(team, patient, overrides={"dose-limit": "ok\x00"})
    assert fields_of(r) == ["overrides.dose-limit"]
    r = team["doc"].get("/api/v1/worklists/patients", {"q": "Str\x1bict"})
    assert fields_of(r) == ["q"]
    r = team["doc"].get("/api/v1/worklists/patients", {"q": "x" * 1000})
    assert fields_of(r) == ["q"]
    r = team["clerk"].get("/api/v1/patients", {"mrn": "H\u202e1"})
    assert fields_of(r) == ["mrn"]


def test_an_administration_time_is_iso_text(team: dict[str, Client], patient: str) -> None:
    oid = order(team, patient).json()["order_id"]
    url = f"/api/v1/patients/{patient}/orders/{oid}/administrations"
    for value, field in ((1767254400, "administered_at"), ("yesterday", "administered_at"),
                         ("1899-01-01T00:00", "administered_at")):
        r = team["nurse"].post(url, {"dose": "1", "unit": "g", field: value}, content_type=J)
        assert fields_of(r) == [field]


def test_a_webhook_subscription_refuses_control_characters(api_client) -> None:
    admin = api_client("admin")
    r = admin.post("/api/v1/subscriptions", {"url": "https://receiver.example.org/\x1b",
                                             "events": ["AdmissionStarted"],
                                             "secret": "s" * 32}, content_type=J)
    assert fields_of(r) == ["url"]
    r = admin.post("/api/v1/subscriptions", {"url": "https://receiver.example.org/",
                                             "events": ["AdmissionStarted"],
                                             "secret": "s" * 1_000_000}, content_type=J)
    assert fields_of(r) == ["secret"]


def test_every_string_a_request_can_carry_has_a_maximum_length(api_client) -> None:
    r = api_client("clerk").get("/api/v1/openapi.json")
    assert r.status_code == 200, r.content[:200]
    doc = r.json()
    schemas = doc.get("components", {}).get("schemas", {})
    unbounded: list[str] = []

    def walk(schema: dict[str, Any], where: str, seen: frozenset[str]) -> None:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            if name not in seen:
                walk(schemas[name], f"{where}<{name}>", seen | {name})
            return
        if schema.get("type") == "string" and "enum" not in schema and "const" not in schema \
                and "maxLength" not in schema:
            unbounded.append(where)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(key, []):
                walk(sub, where, seen)
        for name, sub in (schema.get("properties") or {}).items():
            walk(sub, f"{where}.{name}", seen)
        if isinstance(schema.get("items"), dict):
            walk(schema["items"], f"{where}[]", seen)
        for key in ("additionalProperties", "propertyNames"):
            if isinstance(schema.get(key), dict):
                walk(schema[key], f"{where}{{{key}}}", seen)

    operations = 0
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            operations += 1
            for param in op.get("parameters", []):
                if param["in"] == "query":
                    walk(param["schema"], f"{method} {path}?{param['name']}", frozenset())
            for media in (op.get("requestBody") or {}).get("content", {}).values():
                walk(media["schema"], f"{method} {path} body", frozenset())
    assert operations > 30  # the whole API was walked, not an empty document
    assert unbounded == []


def test_a_fhir_search_value_is_held_to_the_same_text_rules(team: dict[str, Client]) -> None:
    for params in ({"name": "Str\x1bict"}, {"name": "Str\u202eict"}, {"name": "x" * 2000},
                   {"fam\x00ily": "x"}):
        r = team["clerk"].get("/fhir/R4/Patient", params)
        assert r.status_code == 400, (params, r.status_code)
        assert r.json()["resourceType"] == "OperationOutcome"
    too_long = team["clerk"].get("/fhir/R4/Patient", {"name": "x" * 5000})  # past 4 KB
    assert (too_long.status_code, too_long.json()["issue"][0]["code"]) == (414, "too-long")
    assert team["clerk"].get("/fhir/R4/Patient", {"name": "Strict"}).status_code == 200


@pytest.mark.parametrize(("value", "words"), [
    ("0,5", "with a point: '0.5'"), ("1,500", "with a point"), ("1 000", "without spaces"),
    ("1_000", "without spaces"), ("1e3", "Give a number"), ("\u0661", "digits 0 to 9")])
def test_a_dose_as_text_takes_a_decimal_point_only_and_says_how_to_write_it(
        team: dict[str, Client], patient: str, his_store, value: str, words: str) -> None:
    before = his_store.count()
    r = order(team, patient, dose=value)
    assert fields_of(r) == ["dose"]
    assert words in r.json()["errors"][0]["message"]
    assert his_store.count() == before


@pytest.mark.parametrize(("value", "kept"), [("0.5", "0.5"), (".5", "0.5"), ("5.", "5"),
                                             (0.5, "0.5"), (2, "2")])
def test_a_dose_as_a_number_or_decimal_text_is_kept_as_sent(
        team: dict[str, Client], patient: str, value: Any, kept: str) -> None:
    r = order(team, patient, medication_code="MORPH", unit="mg", route="SC", dose=value,
              overrides={"duplicate-order": "Second test order of the same drug"})
    assert r.status_code == 201, r.content
    assert r.json()["dose"] in (kept, float(kept))
