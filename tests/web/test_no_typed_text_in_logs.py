"""No text a user typed reaches a log (hisadmin.core.log_redaction): a unique marker in every
free-text field of a stay, through the API, with refused commands (409, 422) and a store
failure injected (500), is in no log record of any logger at DEBUG; nor a marker put in
every sort, direction and filter parameter of every page a crawl reaches."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest
from django.test import Client

from cosmos_backend.embedded import EmbeddedStore
from patients.domain.errors import InvalidInput
from tests.web.test_crawl import crawl, demo_world, one_per_route  # noqa: F401 - the crawl's fixture

pytestmark = pytest.mark.django_db
J = "application/json"


def every_line(caplog: pytest.LogCaptureFixture) -> str:
    """What any handler could write: each record formatted, with its traceback."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(r) for r in caplog.records) + caplog.text


def test_an_exception_is_logged_by_class_never_by_message(caplog) -> None:
    marker = f"TYPED-{uuid.uuid4().hex}"
    log = logging.getLogger("his.test")
    with caplog.at_level(logging.DEBUG):
        log.error("refused: %s", InvalidInput(f"'{marker}' is not a ward"))
        try:
            try:
                raise ValueError(marker)
            except ValueError as inner:
                raise InvalidInput(f"bad {marker}") from inner
        except InvalidInput:
            log.exception("while saving")
        logging.getLogger("celery.app.trace").error(
            "Task %(name)s[%(id)s] raised unexpected: %(exc)s",
            {"name": "t", "id": "1", "exc": f"ValueError('{marker}')"})
    text = every_line(caplog)
    assert marker not in text
    assert "refused: <InvalidInput>" in text and "raised unexpected: <ValueError>" in text
    assert "patients.domain.errors.InvalidInput (message not logged)" in text
    assert "direct cause" in text and "test_no_typed_text_in_logs.py" in text  # frames kept


def test_a_stay_typed_with_markers_leaves_none_in_the_logs(
    team: dict[str, Client], admit: Callable[..., str], caplog, monkeypatch
) -> None:
    marker = f"MARK{uuid.uuid4().hex[:12]}"
    clerk, doc, nurse = team["clerk"], team["doc"], team["nurse"]
    with caplog.at_level(logging.DEBUG):
        logging.getLogger().setLevel(logging.DEBUG)
        person = {"given_name": f"Ann{marker}", "family_name": f"Typed{marker}",
                  "birth_date": "1961-03-04"}
        pid = clerk.post("/api/v1/patients", person, content_type=J).json()["id"]
        again = clerk.post("/api/v1/patients", person, content_type=J)  # a possible duplicate
        assert again.status_code == 409
        base = f"/api/v1/patients/{pid}"
        r = clerk.post(f"{base}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                              "reason": f"Fell {marker}"}, content_type=J)
        assert r.status_code == 201, r.content
        r = clerk.post(f"{base}/admissions", {"department_id": "MED", "ward_id": f"W{marker}",
                                              "reason": f"Again {marker}"}, content_type=J)
        assert r.status_code in (409, 422)
        r = nurse.post(f"{base}/allergies", {"substance": f"Sub{marker}",
                                             "reaction": f"Hives {marker}",
                                             "severity": "mild"}, content_type=J)
        assert r.status_code in (200, 201, 422), r.content
        r = doc.post(f"{base}/orders", {"kind": "medication", "medication_code": "AMOX",
                                         "dose": "1", "unit": "g", "route": "PO",
                                         "frequency": "Q8H", "note": f"Note {marker}",
                                         "override_reason": f"Why {marker}"}, content_type=J)
        oid = r.json().get("order_id") if r.status_code == 201 else None
        if oid:
            order = f"{base}/orders/{oid}"
            nurse.post(f"{order}/ready", {}, content_type=J)
            nurse.post(f"{order}/administrations", {"status": "not_given", "reason": "other",
                                                    "note": f"Away {marker}"}, content_type=J)
        refused = doc.post(f"{base}/orders", {"kind": "lab", "test_code": f"T{marker}",
                                               "note": f"Lab {marker}"}, content_type=J)
        assert refused.status_code == 422
        hook = Client(HTTP_AUTHORIZATION=team["clerk"].defaults["HTTP_AUTHORIZATION"])
        assert hook.post("/api/v1/subscriptions", {
            "url": f"https://{marker.lower()}.example/x", "events": ["OrderReady"],
            "secret": f"secret-{marker}"}, content_type=J).status_code == 403

        # The store fails with the statement's values in its message, as a database may.
        def failing(self, pk, ops):  # noqa: ANN001, ANN202
            raise RuntimeError(f"constraint failed: ('{pk}', 'Discharged {marker}')")

        monkeypatch.setattr(EmbeddedStore, "execute_batch", failing)
        failed = Client(HTTP_AUTHORIZATION=clerk.defaults["HTTP_AUTHORIZATION"],
                        raise_request_exception=False).post(
            f"{base}/discharge", {"disposition": "home", "note": f"Home {marker}"},
            content_type=J)
        assert failed.status_code == 500
        monkeypatch.undo()
        r = clerk.post(f"{base}/discharge", {"disposition": "home", "note": f"Home {marker}",
                                             "cancel_orders": [oid] if oid else []},
                       content_type=J)
        assert r.status_code in (200, 201, 409), r.content
    assert caplog.records, "nothing was logged: the test would prove nothing"
    assert any(r.exc_info for r in caplog.records)  # the 500's traceback, redacted
    assert marker not in every_line(caplog)
    assert marker.lower() not in every_line(caplog).lower()


MARKED_QUERY_NAMES = ("sort", "dir", "status", "kind", "urgency", "ward", "department",
                      "events", "shift", "day", "date", "page", "q", "mrn", "control_id")


@pytest.mark.parametrize("role", ["clerk", "clinician", "nurse", "admin"])
def test_a_page_crawl_with_markers_in_every_parameter_leaves_none_in_the_logs(
        make_user, demo_world, caplog, role) -> None:  # noqa: F811
    """Every page a role reaches from its menu (one of each route and kind), asked again
    with a marker in each sort, direction and filter parameter (one at a time, so each is
    refused or searched on its own): a 400 for a bad sort or filter is logged, and no log
    line holds the marker."""
    marker = f"TYPED{uuid.uuid4().hex[:12]}“é”"
    client = Client(raise_request_exception=False)
    client.force_login(make_user(f"marked-{role}", role))
    start = ["/admin/", f"/admin/patients/{demo_world['patient_id']}/", "/admin/wards/MED-1/"]
    statuses, _, _ = crawl(client, start, limit=60)
    reached = one_per_route({urlsplit(u).path for u, s in statuses.items() if s == 200})
    assert len(reached) > 5, reached
    answered: set[int] = set()
    with caplog.at_level(logging.DEBUG):
        for path in reached:
            for name in MARKED_QUERY_NAMES:
                answered.add(client.get(path, {name: marker}).status_code)
    assert caplog.records and (role == "admin" or 400 in answered), answered  # not vacuous
    text = every_line(caplog)
    assert marker not in text and marker[:17] not in text
