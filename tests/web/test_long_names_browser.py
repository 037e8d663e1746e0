"""Long names in a real browser. The register form says a name's limit and refuses a longer
one with a form error that keeps what was typed (the browser no longer cuts a pasted name
without a word; the API answers 422 naming the field). A 100-character name without a
space, in odd Unicode, wraps inside the patient banner, the chart's heading, the worklists,
the bed board's card and My patients at 1024 and 1440 px: no page grows wider than the
window, and the whole name is still there to read. Wide tables (Results to review, the HL7
message log) scroll inside their own box at 1024 px instead of widening the page.
Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.utils import timezone

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hl7v2.persistence import store as hl7_store
from patients.domain.shifts import Nurse, Shift, ShiftHours
from patients.use_cases.assignments import AssignNurses, assign_nurses
from patients.use_cases.beds import ward_entry
from tests.web.browser_shots import WIDTHS, named_user, signed_in
from tests.web.test_browser_flow import browser  # noqa: F401  (the browser fixture)
from tests.web.test_due_review_browser import resulted_cbc

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
J = "application/json"

# 100 characters, no space or hyphen to break at: Latin with diacritics, a sharp s (two
# letters in capitals), a Greek and a Cyrillic run, a combining accent, a CJK name.
SEED = "Ødegårdßçÿñ" + "Ἀθηνᾶ" + "Wolfeschlegelsteinhausenbergerdorff" + "Щербаков" + \
       "Nguye\u0302\u0303n" + "Þórsdóttir"
LONG = (SEED * 3)[:100]
GIVEN = "Zoë"
# The page is no wider than the window (nothing sticks out to the right).
OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"
# How much an element's content sticks out of its own box.
STICKS_OUT = "(el) => el.scrollWidth - el.clientWidth"


def test_the_register_form_says_the_limit_and_refuses_a_longer_name_keeping_it(
        live_server, browser, make_user, reference_data, shots) -> None:  # noqa: F811
    make_user("clara", "clerk")
    ctx, page = signed_in(browser, live_server.url, "clara")
    page.goto(f"{live_server.url}/admin/patients/register/")
    box = page.locator("#id_family_name")
    assert box.get_attribute("maxlength") is None  # the browser cuts nothing silently
    assert "At most 100 characters." in page.inner_text(".field-family_name")
    pasted = ("Wolfeschlegelsteinhausenbergerdorff-Ødegård " * 7)[:300]
    box.fill(pasted)
    page.fill("#id_given_name", GIVEN)
    page.fill("#id_birth_date", "1948-03-09")
    page.click("input[type=submit]")
    row = page.locator(".field-family_name")
    assert "At most 100 characters: this one has 300." in row.inner_text()
    assert page.input_value("#id_family_name") == pasted  # kept, to shorten
    assert page.input_value("#id_given_name") == GIVEN
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate(OVERFLOW) <= 0, width
        page.screenshot(path=str(shots / f"register-name-too-long-{width}.png"),
                        full_page=True)
    ctx.close()


def test_the_api_refuses_a_longer_name_with_a_422_naming_the_field(team) -> None:
    r = team["clerk"].post("/api/v1/patients", {
        "given_name": GIVEN, "family_name": LONG * 3, "birth_date": "1948-03-09"},
        content_type=J)
    assert r.status_code == 422 and r["Content-Type"] == "application/problem+json"
    assert "family_name" in {e["field"] for e in r.json()["errors"]}


@pytest.fixture
def long_named(his_store, make_user, team, drain_worklists) -> dict[str, Any]:
    """A patient whose family name is 100 characters without a space, admitted to MED-1
    bed M101, assigned to nurse Dana, with a resulted CBC the doctor ordered; an HL7 log
    entry about them."""
    r = team["clerk"].post("/api/v1/patients", {
        "given_name": GIVEN, "family_name": LONG, "birth_date": "1948-03-09"},
        content_type=J)
    assert r.status_code == 201, r.content
    pid, mrn = r.json()["id"], r.json()["mrn"]
    assert r.json()["family_name"] == LONG
    assert team["clerk"].post(f"/api/v1/patients/{pid}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M101", "reason": "Pneumonia"},
        content_type=J).status_code == 201
    assert team["nurse"].post(f"/api/v1/patients/{pid}/allergies",
                              {"allergen_code": "LATEX", "severity": "mild"},
                              content_type=J).status_code == 200
    dana = named_user(make_user, "dana", "Dana", "Day", "nurse")
    doctor = named_user(make_user, "doctor", "Dora", "Doctor", "clinician")
    make_user("clara", "clerk")
    charge = Actor(id="1", username="charge", display_name="Charge", roles=("charge_nurse",))
    shift = Shift.at(datetime.now(UTC), ShiftHours.of_ward(ward_entry(his_store, "MED-1")),
                     timezone.get_current_timezone())
    assign_nurses(AssignNurses("MED-1", shift, {"M101": Nurse(str(dana.pk), "Dana Day")}),
                  UnitOfWork(his_store), actor=charge)
    by_doctor = Actor(id=str(doctor.pk), username="doctor", display_name="Dora Doctor",
                      roles=("clinician",))
    resulted_cbc(his_store, pid, by_doctor, charge, wbc="17.5")
    for cid, status, reason in [("7Q3KX2M5VJ4NB6ZC8DRT", "accepted", ""),
                                ("K2M5VJ4NB6ZC8DRT7Q3X", "dead",
                                 "AE: PID-5 family name longer than the receiver's 48 "
                                 "characters; the message was refused by the engine")]:
        hl7_store.log_attempt(his_store, hl7_store.LogEntry(
            control_id=cid, destination_id="gone", stream=f"P_{pid}", seq=2,
            event_type="AdmissionStarted", trigger="A01", mrn=mrn, status=status,
            attempts=8 if status == "dead" else 1, reason=reason, at=hl7_store.now_iso()))
    drain_worklists()
    return {"pid": pid, "mrn": mrn}


def _fits(page: Any, what: str, shots: Any, name: str) -> None:
    """At each width: the page no wider than the window, ``what`` (a selector) inside its
    own box, a screenshot."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        assert page.evaluate(OVERFLOW) <= 0, (name, width, page.evaluate(OVERFLOW))
        for el in page.locator(what).all():
            assert el.evaluate(STICKS_OUT) <= 0, (name, width, what)


def _whole_name(page: Any, selector: str, name: str) -> None:
    """The whole name can be read: in the element's text (wrapped) or its title."""
    el = page.locator(selector).first
    text = " ".join(el.inner_text().split()).replace("\u00ad", "")
    assert name.casefold() in text.replace(" ", "").casefold() or \
        name in (el.get_attribute("title") or ""), (selector, text[:200])


def _legible(page: Any) -> None:
    """At 1024 px the worklist's name column is still wide enough to read its lines (the
    table scrolls in its box rather than squeeze the name to a few letters a line)."""
    page.set_viewport_size({"width": 1024, "height": 900})
    width = page.locator("#result_list td.wrap-anywhere").first.evaluate(
        "(el) => el.getBoundingClientRect().width")
    assert width >= 150, width


def test_a_long_name_wraps_on_every_page_that_shows_it(
        live_server, browser, long_named, shots) -> None:  # noqa: F811
    base, pid = live_server.url, long_named["pid"]
    ctx, page = signed_in(browser, base, "dana")
    page.goto(f"{base}/admin/patients/{pid}/")
    _whole_name(page, "#patient-banner .pb-name", LONG)
    _fits(page, "#patient-banner, #content > h1", shots, "long-name-chart")
    page.goto(f"{base}/admin/wards/MED-1/")
    _whole_name(page, "#bed-M101", LONG)
    _fits(page, "#bed-M101, #content-main .module", shots, "long-name-bed-board")
    for url, name in ((f"{base}/admin/worklists/my-patients/", "my-patients"),
                      (f"{base}/admin/worklists/admitted/?department=MED", "admitted"),
                      (f"{base}/admin/worklists/observations-due/?ward=MED-1",
                       "observations-due")):
        page.goto(url)
        _whole_name(page, "#result_list td.wrap-anywhere", LONG)
        _fits(page, "#result_list td.wrap-anywhere", shots, f"long-name-{name}")
        _legible(page)
    ctx.close()

    ctx, page = signed_in(browser, base, "doctor")
    page.goto(f"{base}/admin/worklists/results-to-review/")
    _whole_name(page, "#result_list td.wrap-anywhere", LONG)
    _fits(page, "#result_list td.wrap-anywhere", shots, "long-name-results-to-review")
    _legible(page)
    ctx.close()


def test_the_hl7_message_log_scrolls_in_its_box_at_1024(
        live_server, browser, long_named, make_user, shots, settings) -> None:  # noqa: F811
    base = live_server.url
    settings.ADMIN_TWO_FACTOR = False  # an admin without the second factor, for the log
    make_user("hl7admin", "admin")
    ctx, page = signed_in(browser, base, "hl7admin")
    page.goto(f"{base}/admin/hl7-messages/")
    assert long_named["mrn"] in page.inner_text("#result_list")
    _fits(page, "#content-main", shots, "hl7-message-log")
    ctx.close()
