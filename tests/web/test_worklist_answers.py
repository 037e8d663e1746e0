"""Worklist answers are rendered by the endpoint, not validated and dumped by ninja: they
must be exactly what the documented schema (WorklistPage) would have produced."""

from __future__ import annotations

import orjson
import pytest
from django.test import RequestFactory

from worklists.api import WorklistPage, _answer

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("fields", [
    {"continuation": "abc", "generation": 3, "lag": {"pending": 0, "seconds": 0.1,
                                                     "dead_letters": 0},
     "total": 7, "truncated": True},
    {"continuation": None, "total": 1},  # the MRN lookup's answer
    {"continuation": None, "generation": 2, "lag": None},  # medications due
])
def test_an_answer_is_what_the_schema_would_dump(fields: dict) -> None:
    items = [{"patient_id": "p1", "name": "DOE, Jane", "age": 40, "bed": None,
              "admission": {"ward_id": "MED-1"}}]
    answer = _answer(RequestFactory().get("/"), items, **fields)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"
    body = orjson.loads(answer.content)
    assert body == WorklistPage.model_validate({"items": items, **fields}).model_dump()
    assert list(body) == list(WorklistPage.model_fields)  # the documented order


def test_an_answer_missing_a_required_field_or_with_an_unknown_one_is_a_bug() -> None:
    with pytest.raises(TypeError, match="continuation"):
        _answer(RequestFactory().get("/"), [])
    with pytest.raises(TypeError, match="colour"):
        _answer(RequestFactory().get("/"), [], continuation=None, colour="red")
