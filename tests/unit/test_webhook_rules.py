"""Webhooks' plain rules: what a subscription accepts, the body, its signature, the backoff."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from patients.domain.errors import InvalidInput
from patients.events_public import public_event
from webhooks.domain import signing
from webhooks.domain.subscriptions import check_events, check_secret, check_url

EVENT = {
    "eventId": "e-1",
    "type": "AdmissionStarted",
    "occurredAt": "2026-01-02T03:04:05+00:00",
    "seq": 3,
    "data": {"wardId": "MED-1"},
    "actor": {"username": "clerk"},
}


@pytest.mark.parametrize("url", ["http://receiver.example/hook", "https://r.example:8443/a?b=1"])
def test_it_accepts_http_and_https_urls(url: str) -> None:
    assert check_url(f"  {url} ") == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://r.example/x",
        "file:///etc/passwd",
        "receiver/hook",
        "http://",
        "javascript:alert(1)",
        "http://u:p@r.example/",
        "http://r.example:99999/",
        "",
        "http://r.example/" + "a" * 2100,
    ],
)
def test_it_refuses_other_urls(url: str) -> None:
    with pytest.raises(InvalidInput) as err:
        check_url(url)
    assert err.value.field == "url"


def test_it_wants_a_secret_of_sixteen_characters_at_least() -> None:
    assert check_secret("x" * 16) == "x" * 16
    for bad in ("x" * 15, "", "x" * 201):
        with pytest.raises(InvalidInput):
            check_secret(bad)


def test_it_knows_the_patient_event_types_only() -> None:
    assert {t.value for t in check_events(["AdmissionStarted", "OrderReady"])} == {
        "AdmissionStarted",
        "OrderReady",
    }
    for bad in ([], ["NoSuchEvent"], ["BedCleaned"]):
        with pytest.raises(InvalidInput) as err:
            check_events(bad)
        assert err.value.field == "events"


def test_it_sends_the_events_public_form_as_the_body() -> None:
    body = json.loads(signing.body(public_event(EVENT, patient_id="pat-1")))
    assert body == {
        "event_id": "e-1",
        "type": "AdmissionStarted",
        "schema_version": 1,
        "occurred_at": "2026-01-02T03:04:05+00:00",
        "patient_id": "pat-1",
        "seq": 3,
        "actor": {"id": None, "username": "clerk", "display_name": ""},
        "data": {"ward_id": "MED-1"},
    }


def test_it_signs_the_raw_body_with_hmac_sha256() -> None:
    raw = signing.body(public_event(EVENT, patient_id="pat-1"))
    expected = hmac.new(b"s" * 16, raw, hashlib.sha256).hexdigest()
    assert signing.signature(raw, "s" * 16) == f"sha256={expected}"
    assert signing.verify(raw, "s" * 16, f"sha256={expected}")
    assert not signing.verify(raw + b" ", "s" * 16, f"sha256={expected}")
    headers = signing.headers(raw, "s" * 16, delivery="d-1", event_type="AdmissionStarted")
    assert headers["X-HIS-Signature"] == f"sha256={expected}"
    assert headers["X-HIS-Delivery"] == "d-1"


def test_it_keeps_the_delivery_id_stable_per_event_and_subscription() -> None:
    assert signing.delivery_id("s1", "P_a", 3) == signing.delivery_id("s1", "P_a", 3)
    assert signing.delivery_id("s1", "P_a", 3) != signing.delivery_id("s2", "P_a", 3)


def test_it_doubles_the_backoff_up_to_a_cap() -> None:
    assert [signing.backoff(n, base=1, cap=5) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 5, 5]


def test_the_documented_receiver_snippet_verifies_a_real_delivery() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "webhooks.md").read_text()
    snippet = doc.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}
    exec(compile(snippet, "docs/webhooks.md", "exec"), scope)  # noqa: S102 - our own doc
    raw = signing.body(public_event(EVENT, patient_id="pat-1"))
    header = signing.signature(raw, "s" * 16)
    assert scope["verified_event"](raw, header, "s" * 16)["patient_id"] == "pat-1"
    with pytest.raises(ValueError):
        scope["verified_event"](raw, header, "t" * 16)
