"""The medication round in a real browser, on a fixed clock the live server shares: a
clinician prescribes from the Prescribe form (TDS, first dose next), then nurses record
from the medication record (given), from Medications due (not given, with a reason) and
from the chart's Administer; an early dose with its override; a second record of a slot
refused with a message, and a dose too soon held back; and the days the clocks change.
After each record the slot is closed on the MAR page, on Medications due and in the API.

The live server runs in this process, so ``time-machine`` moves the clock the use cases
read (``datetime.now(UTC)``) and the pages' ``timezone.now()`` alike. Screenshots at 1024
and 1440 px go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests.web.fixed_clock import fixed_clock, slot_of  # noqa: F401  (the clock fixture)
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.timeout(60)]

WIDTHS = (1024, 1440)
AMOX = {"medication_code": "AMOX", "dose": "500", "unit": "mg", "route": "PO",
        "frequency": "TDS"}


@pytest.fixture
def staff(make_user: Callable[..., Any]) -> None:
    for name, role in (("doctor", "clinician"), ("nurse", "nurse"), ("nurse2", "nurse")):
        make_user(name, role)


def admitted(store: Any, family: str, bed: str) -> str:
    """A patient on MED-1 whose allergies were asked (none known)."""
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Ines", family, date(1951, 4, 4), sex="female"), UnitOfWork(store),
        actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia", bed=bed),
                            UnitOfWork(store), actor=SYSTEM_ACTOR)
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid),
                                        UnitOfWork(store), actor=SYSTEM_ACTOR)
    return pid


def prescribed(store: Any, pid: str) -> str:
    """Amoxicillin 500 mg PO TDS from now, first dose at the next standard time, ready."""
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", **{**AMOX, "dose": Decimal(AMOX["dose"])}),
        UnitOfWork(store), actor=SYSTEM_ACTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"),
                             UnitOfWork(store), actor=SYSTEM_ACTOR)
    return order.order_id


def as_user(page: Any, base: str, user: str) -> None:
    """A fresh login (the clock may have jumped past the idle timeout)."""
    page.context.clear_cookies()
    login(page, base, user)


def submit(page: Any) -> None:
    """Send the form and wait for the answer (a redirect or the form again)."""
    with page.expect_navigation():
        page.click("input[type=submit]")


def shoot(page: Any, shots: Path, name: str) -> None:
    """The page at each width, full length."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"round-{name}-{width}.png"), full_page=True)


def api_slots(page: Any, base: str, pid: str, day: str) -> dict[str, dict[str, Any]]:
    """The day's slots in the API (read with the page's session), by slot id."""
    answer = page.request.get(f"{base}/api/v1/patients/{pid}/mar?date={day}")
    assert answer.status == 200, answer.text()
    return {s["slot_id"]: s for o in answer.json()["orders"] for s in o["slots"]}


def mar_cell(page: Any, base: str, pid: str, day: str, slot: str) -> Any:
    page.goto(f"{base}/admin/patients/{pid}/mar/?date={day}")
    return page.locator(f'#mar-scheduled .mar-slot[data-slot-id="{slot}"]')


def due_links(page: Any, base: str, slot: str) -> int:
    """How many Record links Medications due has for the slot (0 once it is answered)."""
    page.goto(f"{base}/admin/worklists/medications-due/?ward=MED-1")
    return page.locator(f'#result_list a[href*="slot={slot}"]').count()


def closed_everywhere(page: Any, base: str, pid: str, day: str, slot: str, status: str,
                      drain: Callable[[], int]) -> Any:
    """The slot is ``status`` on the MAR page and in the API, and off Medications due;
    the MAR cell, for more checks."""
    drain()
    assert due_links(page, base, slot) == 0
    assert api_slots(page, base, pid, day)[slot]["status"] == status
    cell = mar_cell(page, base, pid, day, slot)
    assert cell.count() == 1 and cell.get_attribute("data-status") == status
    expect(cell.locator("a.mar-record")).to_have_count(0)
    return cell


def fill_prescription(page: Any, values: dict[str, str]) -> None:
    """The Prescribe form filled as a prescriber does (medication first: it proposes the
    unit), first dose at the next standard time."""
    page.select_option("#id_medication_code", values["medication_code"])
    page.fill("#id_dose", values["dose"])
    for field in ("unit", "route", "frequency"):
        page.select_option(f"#id_{field}", values[field])
    page.check('input[name="first_dose"][value="next"]')


def prescribe_from_the_form(page: Any, base: str, pid: str) -> None:
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#prescribe-link")
    fill_prescription(page, AMOX)
    submit(page)
    page.wait_for_selector("text=order placed")
    assert "Amoxicillin 500 mg PO TDS" in page.inner_text("#orders")


def the_order(page: Any, base: str, pid: str, day: str) -> str:
    answer = page.request.get(f"{base}/api/v1/patients/{pid}/mar?date={day}")
    (order,) = answer.json()["orders"]
    return order["order_id"]


def test_a_tds_prescription_is_recorded_from_the_mar_the_ward_list_and_the_chart(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        drain_worklists, shots) -> None:
    day = "2026-06-10"
    clock = fixed_clock(day, "07:40")
    pid = admitted(his_store, "Rounder", "M101")
    base = live_server.url
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()

    login(page, base, "doctor")
    prescribe_from_the_form(page, base, pid)
    oid = the_order(page, base, pid, day)
    slots = [slot_of(oid, day, t) for t in ("08:00", "14:00", "20:00")]
    assert list(api_slots(page, base, pid, day)) == slots  # the standard times, no more

    as_user(page, base, "nurse")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#orders button[value=ready]")
    page.wait_for_selector("text=Order updated.")

    # 07:50: the 08:00 dose is due; given from the medication record
    clock.at("07:50")
    page.click("a.mar-link")
    cell = page.locator(f'#mar-scheduled .mar-slot[data-slot-id="{slots[0]}"]')
    assert cell.get_attribute("data-status") == "due"
    drain_worklists()
    assert due_links(page, base, slots[0]) == 1
    page.goto(f"{base}/admin/patients/{pid}/mar/?date={day}")
    shoot(page, shots, "mar-0800-due")
    cell.locator("a.mar-record").click()
    assert page.input_value("#id_dose") == "500" and page.input_value("#id_unit") == "mg"
    assert "Wed 10 Jun, 08:00" in page.inner_text(".mar-record-for")
    submit(page)
    assert "Dose given recorded: " in page.inner_text("ul.messagelist")
    cell = closed_everywhere(page, base, pid, day, slots[0], "given", drain_worklists)
    assert "500 mg at 07:5" in cell.inner_text() and "nurse" in cell.inner_text()

    # 13:50: the 14:00 dose, not given (refused), from Medications due
    clock.at("13:50")
    as_user(page, base, "nurse")
    drain_worklists()
    page.goto(f"{base}/admin/worklists/medications-due/?ward=MED-1")
    row = page.locator("#result_list tbody tr", has_text="ROUNDER, Ines")
    assert "Due" in row.inner_text()
    shoot(page, shots, "due-1400")
    row.locator(f'a[href*="slot={slots[1]}"]').click()
    assert "Wed 10 Jun, 14:00" in page.inner_text(".mar-record-for")
    page.check('input[name="status"][value="not_given"]')
    page.select_option("#id_reason", "refused")
    page.fill("#id_note", "Says it upsets her stomach")
    submit(page)
    assert "Dose not given recorded" in page.inner_text("ul.messagelist")
    cell = closed_everywhere(page, base, pid, day, slots[1], "not_given", drain_worklists)
    assert "Refused" in cell.inner_text() and "nurse" in cell.inner_text()

    # 19:55: the 20:00 dose from the chart's Administer, which closes the slot due
    clock.at("19:55")
    as_user(page, base, "nurse2")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#orders .administer-link")
    page.fill("#id_dose", "500")
    page.select_option("#id_unit", "mg")
    submit(page)
    page.wait_for_selector("text=Dose given recorded")
    cell = closed_everywhere(page, base, pid, day, slots[2], "given", drain_worklists)
    assert "nurse2" in cell.inner_text()
    shoot(page, shots, "mar-day-done")


def test_an_early_dose_is_recorded_with_its_reason_and_the_mar_says_who_and_why(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        drain_worklists, shots) -> None:
    day = "2026-06-10"
    clock = fixed_clock(day, "07:30")
    pid = admitted(his_store, "Early", "M102")
    oid = prescribed(his_store, pid)
    two = slot_of(oid, day, "14:00")
    clock.at("12:30")  # 90 minutes before 14:00: outside the 60-minute window
    base = live_server.url
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    login(page, base, "nurse")
    cell = mar_cell(page, base, pid, day, two)
    assert cell.get_attribute("data-status") == "upcoming"
    cell.locator("a.mar-record").click()
    submit(page)

    warning = page.locator('#guard-warnings .guard-warning[data-check="early-dose"]')
    expect(warning).to_be_visible()
    assert "Early dose" in warning.inner_text() and "14:00" in warning.inner_text()
    expect(page.locator("#guard-warnings .guard-warning")).to_have_count(1)
    assert page.input_value("input[type=submit]") == "Record anyway"
    shoot(page, shots, "early-dose-warning")
    assert api_slots(page, base, pid, day)[two]["status"] == "upcoming"  # nothing yet

    warning.locator("textarea").fill("Leaving for theatre at 13:00, surgeon agreed")
    submit(page)
    assert "Dose given recorded: " in page.inner_text("ul.messagelist")
    cell = closed_everywhere(page, base, pid, day, two, "given", drain_worklists)
    override = cell.locator(".mar-override")
    assert override.count() == 1
    said = override.inner_text()
    assert "Early dose" in said and "nurse" in said and "Leaving for theatre" in said
    entry = api_slots(page, base, pid, day)[two]["administration"]
    assert [(o["check"], o["by"]) for o in entry["overrides"]] == [("early-dose", "nurse")]
    shoot(page, shots, "early-dose-recorded")


def test_a_second_record_of_a_slot_is_refused_and_a_dose_too_soon_waits_for_reasons(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        drain_worklists, shots) -> None:
    day = "2026-06-10"
    fixed_clock(day, "07:55")
    pid = admitted(his_store, "Twice", "M103")
    oid = prescribed(his_store, pid)
    eight, two = slot_of(oid, day, "08:00"), slot_of(oid, day, "14:00")
    base = live_server.url
    first = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    second = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
    login(first, base, "nurse")
    login(second, base, "nurse2")
    for page in (first, second):  # both open the 08:00 dose
        mar_cell(page, base, pid, day, eight).locator("a.mar-record").click()
    submit(first)
    assert "Dose given recorded: " in first.inner_text("ul.messagelist")

    submit(second)  # the order changed under the form: nothing recorded, look again
    assert "changed by someone else" in second.inner_text(".errornote")
    submit(second)  # and again: that dose time is answered
    assert "already recorded" in second.inner_text(".errornote")
    shoot(second, shots, "second-record-refused")
    # a Record form opened after the dose was given is refused the same way
    second.goto(f"{base}/admin/patients/{pid}/mar/{oid}/record/?slot={eight}")
    submit(second)
    assert "already recorded" in second.inner_text(".errornote")
    cell = closed_everywhere(second, base, pid, day, eight, "given", drain_worklists)
    assert "nurse2" not in cell.inner_text() and "nurse" in cell.inner_text()
    assert api_slots(second, base, pid, day)[eight]["administration"]["by"] == "nurse"

    # the chart's Administer at 07:56: no dose time is due, so it asks which
    second.goto(f"{base}/admin/patients/{pid}/")
    second.click("#orders .administer-link")
    second.fill("#id_dose", "500")
    second.select_option("#id_unit", "mg")
    submit(second)
    choice = second.locator('input[name="slot_id"][type=radio]')
    assert choice.count() == 2  # the day's open dose times: 14:00 and 20:00
    expect(second.locator(f'input[name="slot_id"][value="{eight}"]')).to_have_count(0)
    shoot(second, shots, "which-dose-time")
    second.check(f'input[name="slot_id"][value="{two}"]')
    submit(second)
    checks = second.locator("#guard-warnings .guard-warning")
    assert {checks.nth(i).get_attribute("data-check") for i in range(checks.count())} == {
        "early-dose", "dose-interval"}
    assert "Not recorded yet" in second.inner_text("#guard-warnings")
    submit(second)  # no reasons: still refused, each box says so
    expect(second.locator("#guard-warnings .errorlist")).to_have_count(2)
    shoot(second, shots, "dose-too-soon")
    drain_worklists()
    assert api_slots(second, base, pid, day)[two]["status"] == "upcoming"


@pytest.mark.parametrize(("day", "kind"), [("2026-03-29", "spring-forward"),
                                           ("2026-10-25", "fall-back")])
def test_on_a_clock_change_day_the_doses_are_at_local_standard_times(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        drain_worklists, shots, day, kind) -> None:
    fixed_clock(day, "07:40")
    pid = admitted(his_store, "Clockwise", "M104")
    base = live_server.url
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    login(page, base, "doctor")
    prescribe_from_the_form(page, base, pid)
    oid = the_order(page, base, pid, day)

    as_user(page, base, "nurse")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#orders button[value=ready]")
    page.wait_for_selector("text=Order updated.")
    slots = api_slots(page, base, pid, day)
    utc = {"spring-forward": ["07:00", "13:00", "19:00"], "fall-back": ["08:00", "14:00",
                                                                       "20:00"]}[kind]
    assert [s["scheduled_for"] for s in slots.values()] == [
        f"{day}T{t}:00+00:00" for t in utc]
    with page.expect_navigation():
        page.click("a.mar-link")
    shown = page.locator("#mar-scheduled th.mar-time").all_inner_texts()
    assert sorted(set(shown)) == ["08:00", "14:00", "20:00"]
    eight = slot_of(oid, day, "08:00")
    assert eight in slots and eight.endswith(f"T{utc[0].replace(':', '')}Z")
    cell = page.locator(f'#mar-scheduled .mar-slot[data-slot-id="{eight}"]')
    assert cell.get_attribute("data-status") == "due"
    shoot(page, shots, f"{kind}-mar")
    cell.locator("a.mar-record").click()
    submit(page)
    assert "Dose given recorded: " in page.inner_text("ul.messagelist")
    cell = closed_everywhere(page, base, pid, day, eight, "given", drain_worklists)
    assert "500 mg at 07:4" in cell.inner_text()
    assert [s["status"] for s in api_slots(page, base, pid, day).values()] == [
        "given", "upcoming", "upcoming"]
