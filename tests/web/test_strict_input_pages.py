"""Strict input on the pages: the forms refuse what the API refuses (control and
text-direction characters, dates out of range), with the error shown on the field."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
PERSON = {"given_name": "Ana", "family_name": "Form", "birth_date": "1980-01-01",
          "sex": "female"}


@pytest.fixture
def web(make_user, reference_data) -> Client:
    client = Client()
    client.force_login(make_user("strict-pages", "clerk", "clinician", "nurse"))
    return client


def refused_on(response: Any, field: str) -> str:
    """The error the page shows on ``field`` (asserted to be shown, and only there)."""
    assert response.status_code == 200, response.status_code
    form = response.context["form"]
    assert list(form.errors) == [field], form.errors
    message = form.errors[field][0]
    assert html.escape(message) in response.content.decode()
    return message


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\u202e", "\u2069", "\n"])
def test_the_registration_form_refuses_control_characters_in_a_name(
        web: Client, his_store, char: str) -> None:
    before = his_store.count()
    r = web.post("/admin/patients/register/", {**PERSON, "family_name": f"Fo{char}rm"})
    message = refused_on(r, "family_name")
    assert "U+" in message or "Null" in message
    assert his_store.count() == before


@pytest.mark.parametrize(("day", "words"), [("1899-12-31", "1900"), ("2101-01-01", "future"),
                                            ("2999-01-01", "future")])
def test_the_registration_form_refuses_a_birth_date_out_of_range(
        web: Client, his_store, day: str, words: str) -> None:
    before = his_store.count()
    assert words in refused_on(web.post("/admin/patients/register/",
                                        {**PERSON, "birth_date": day}), "birth_date")
    assert his_store.count() == before


def test_a_text_area_keeps_its_lines_but_not_other_control_characters(
        web: Client, admit, his_store) -> None:
    pid = admit("Wardly")  # admitted; its discharge form has a note
    bad = web.post(f"/admin/patients/{pid}/allergies/add/", {
        "substance": "Latex\u202e", "severity": "mild", "etag": "x"})
    refused_on(bad, "substance")
    before = his_store.count()
    other = web.post(f"/admin/patients/{pid}/allergies/add/", {
        "substance": "Nuts", "reaction": "Rash\x1b[0m", "severity": "mild", "etag": "x"})
    refused_on(other, "reaction")
    assert his_store.count() == before


def test_an_order_note_may_span_lines(web: Client, admit) -> None:
    pid = admit("Noted")
    order = {"test_code": "CRP", "urgency": "routine"}
    bad = web.post(f"/admin/patients/{pid}/orders/new/lab/", {**order, "note": "a\x07b"})
    refused_on(bad, "note")
    good = web.post(f"/admin/patients/{pid}/orders/new/lab/",
                    {**order, "note": "Fasting.\r\n\tMorning sample."})
    assert good.status_code == 302, good.context and good.context["form"].errors
