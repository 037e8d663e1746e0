"""The medication round's forms in a real browser, with the values people type: a decimal
comma on Prescribe and on the one Record form (opened from the MAR and from the chart), a
dose not given hours ahead, a new prescription recorded from Medications due without a
Ready step, a second dose in the same window, and a once-daily order placed in the
afternoon. Each typed value is checked against what was stored.

The live server runs in this process on a fixed clock (``fixed_clock``, Europe/London).
Screenshots at 1024 and 1440 px go to ``$SCREENSHOT_DIR`` (default: a temporary
directory)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.persistence import queries
from tests.web.fixed_clock import fixed_clock, slot_of  # noqa: F401  (the clock fixture)
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)
from tests.web.test_medication_round_browser import (
    admitted,
    as_user,
    fill_prescription,
    mar_cell,
    shoot,
    submit,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.timeout(120)]

# what a person types → what must be stored (None: refused, nothing stored)
TYPED = [("0,5", "0.5"), ("1,5", "1.5"), ("0.5", "0.5"), (".5", "0.5"), ("5.", "5"),
         ("1 000", None)]
GOOD = "Patient in theatre until the evening, surgeon agreed"
RED = "rgb(186, 33, 33)"  # how a refused number is marked (his.css)
MORPHINE = {"medication_code": "MORPH", "unit": "mg", "route": "SC", "frequency": "Q4H"}


@pytest.fixture
def staff(make_user: Callable[..., Any]) -> None:
    for name, role in (("doctor", "clinician"), ("nurse", "nurse"), ("nurse2", "nurse")):
        make_user(name, role)


def place(store: Any, pid: str, **values: Any) -> str:
    """A prescription placed (and left "created"), any duplicate answered."""
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", overrides={"duplicate-order": GOOD}, **values),
        UnitOfWork(store), actor=SYSTEM_ACTOR)
    return order.order_id


def amoxicillin_tds(clock_at: Any, store: Any, family: str, bed: str, placed: str
                    ) -> tuple[Any, str, str]:
    """(the clock, the patient, the order): amoxicillin 500 mg PO TDS placed at ``placed`` on
    2026-06-10, first dose at the next standard time, left "created"."""
    clock = clock_at("2026-06-10", placed)
    pid = admitted(store, family, bed)
    return clock, pid, place(store, pid, medication_code="AMOX", dose=Decimal("500"),
                             unit="mg", route="PO", frequency="TDS")


def signed_in(chromium: Any, base: str, user: str, *, width: int = 1440) -> Any:
    """A new browser page, ``width`` px wide, logged in as ``user``."""
    page = chromium.new_context(viewport={"width": width, "height": 900}).new_page()
    login(page, base, user)
    return page


def cancel(store: Any, pid: str, oid: str) -> None:
    use_cases.progress_order(use_cases.ProgressOrder(pid, oid, "cancel", "Test done"),
                             UnitOfWork(store), actor=SYSTEM_ACTOR)


def medication_orders(store: Any, pid: str) -> list[dict[str, Any]]:
    return sorted((o for o in queries.orders(store, pid) if o["kind"] == "medication"),
                  key=lambda o: o["placedAt"])


def test_prescribe_reads_a_decimal_comma_and_refuses_a_group_separator_keeping_it(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        shots) -> None:
    fixed_clock("2026-06-10", "09:00")
    pid = admitted(his_store, "Komma", "M101")
    base = live_server.url
    page = signed_in(browser, base, "doctor")
    for typed, stored in TYPED:
        page.goto(f"{base}/admin/patients/{pid}/orders/new/medication/")
        dose = page.locator("#id_dose")
        assert dose.get_attribute("type") == "text"
        assert dose.get_attribute("inputmode") == "decimal"
        # an empty field is not marked on load; a group separator is, once typed, before
        # the server says why
        assert dose.evaluate("e => getComputedStyle(e).borderTopColor") != RED
        fill_prescription(page, {**MORPHINE, "dose": typed})
        assert dose.input_value() == typed  # the browser keeps it as typed (no "05")
        dose.press("Tab")
        marked = dose.evaluate("e => e.matches(':user-invalid') && "
                               f"getComputedStyle(e).borderTopColor === '{RED}'")
        assert marked is (stored is None), typed
        if stored is None:
            shoot(page, shots, "prescribe-dose-marked")
        before = len(medication_orders(his_store, pid))
        submit(page)
        orders = medication_orders(his_store, pid)
        if stored is None:
            assert len(orders) == before  # nothing placed
            errors = page.inner_text("ul.errorlist")
            assert "without spaces" in errors
            assert page.input_value("#id_dose") == typed  # what was typed stays
            shoot(page, shots, "prescribe-dose-refused")
            continue
        assert len(orders) == before + 1
        order = orders[-1]
        assert Decimal(order["dose"]) == Decimal(stored), (typed, order["dose"])
        said = page.inner_text("ul.messagelist")
        assert f"order placed — Morphine {stored} mg SC Q4H." in said, said
        if typed == "0,5":
            shoot(page, shots, "prescribe-placed-half")
        cancel(his_store, pid, order["orderId"])  # the next one is no duplicate


def test_the_record_form_reads_a_decimal_comma_from_the_mar_and_from_the_chart(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        shots) -> None:
    day = "2026-06-10"
    fixed_clock(day, "09:00")
    pid = admitted(his_store, "Dosis", "M102")
    base = live_server.url
    page = signed_in(browser, base, "nurse", width=1024)
    for n, (typed, stored) in enumerate(TYPED):
        # a STAT dose of 10 mg, new (not marked ready): one dose time, now
        oid = place(his_store, pid, medication_code="MORPH", dose=Decimal("10"), unit="mg",
                    route="SC", frequency="STAT", first_dose="now")
        if n % 2:  # from the chart's Administer
            page.goto(f"{base}/admin/patients/{pid}/")
            page.locator(f'#orders .administer-link[href*="{oid}"]').click()
            assert "Back to the chart" in page.inner_text(".mar-record-for")
        else:  # from the MAR's Record
            cell = page.locator(f'#mar-scheduled .mar-row[data-order="{oid}"] a.mar-record')
            page.goto(f"{base}/admin/patients/{pid}/mar/?date={day}")
            cell.click()
        assert "dose due" in page.inner_text(".mar-record-for")  # the dose time named
        assert page.locator("#id_unit option:checked").inner_text() == "milligram"
        dose = page.locator("#id_dose")
        assert dose.get_attribute("type") == "text"
        dose.fill(typed)
        submit(page)
        entries = next(o for o in medication_orders(his_store, pid)
                       if o["orderId"] == oid)["administrations"]
        if stored is None:
            assert entries == []
            assert "without spaces" in page.inner_text("ul.errorlist")
            assert page.input_value("#id_dose") == typed
            shoot(page, shots, "record-dose-refused")
            continue
        assert [Decimal(e["dose"]) for e in entries] == [Decimal(stored)], (typed, entries)
        assert f"Dose given recorded: {stored} mg at 09:0" in page.inner_text("ul.messagelist")
        if typed == "0,5":
            shoot(page, shots, "record-dose-half-on-mar")


def test_not_given_hours_ahead_needs_its_own_reason_and_the_cell_says_when(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        shots) -> None:
    day = "2026-06-10"
    clock, pid, oid = amoxicillin_tds(fixed_clock, his_store, "Ahead", "M103", "08:30")
    eight_pm = slot_of(oid, day, "20:00")
    clock.at("13:51")
    base = live_server.url
    page = signed_in(browser, base, "nurse")
    mar_cell(page, base, pid, day, eight_pm).locator("a.mar-record").click()
    page.check('input[name="status"][value="not_given"]')
    page.select_option("#id_reason", "held")
    submit(page)
    warning = page.locator('#guard-warnings .guard-warning[data-check="early-not-given"]')
    expect(warning).to_be_visible()
    assert "Not given ahead of time" in warning.inner_text()
    assert "20:00" in warning.inner_text() and "13:5" in warning.inner_text()
    assert queries.order(his_store, pid, oid)["administrations"] == []  # nothing yet
    shoot(page, shots, "not-given-ahead-warning")
    submit(page)  # no reason: still refused
    expect(warning.locator(".errorlist")).to_have_count(1)
    warning.locator("textarea").fill(GOOD)
    submit(page)
    assert "Dose not given recorded (the 20:00 dose): Held." in page.inner_text(
        "ul.messagelist")
    cell = mar_cell(page, base, pid, day, eight_pm)
    assert cell.get_attribute("data-status") == "not_given"
    text = cell.inner_text()
    assert "Held" in text and "recorded 13:5" in text
    assert "Not given ahead of time overridden by" in text and GOOD in text
    shoot(page, shots, "not-given-ahead-recorded")
    [entry] = queries.order(his_store, pid, oid)["administrations"]
    assert [(o["check"], o["reason"]) for o in entry["overrides"]] == [
        ("early-not-given", GOOD)]


def test_a_new_prescription_is_recorded_from_medications_due_without_a_ready_step(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        drain_worklists, shots) -> None:
    day = "2026-06-10"
    clock = fixed_clock(day, "07:30")
    pid = admitted(his_store, "Neu", "M104")
    base = live_server.url
    page = signed_in(browser, base, "doctor")
    page.goto(f"{base}/admin/patients/{pid}/orders/new/medication/")
    fill_prescription(page, {"medication_code": "PARA", "dose": "1000", "unit": "mg",
                             "route": "PO", "frequency": "QDS"})
    submit(page)
    [order] = medication_orders(his_store, pid)
    assert order["status"] == "created"
    eight = slot_of(order["orderId"], day, "08:00")

    clock.at("07:55")
    as_user(page, base, "nurse")
    cell = mar_cell(page, base, pid, day, eight)
    expect(cell.locator("a.mar-record")).to_have_count(1)  # recordable while "Created"
    assert "mark it ready" not in page.inner_text("#mar-scheduled")
    drain_worklists()
    page.goto(f"{base}/admin/worklists/medications-due/?ward=MED-1")
    shoot(page, shots, "due-new-prescription")
    page.locator(f'#result_list a[href*="slot={eight}"]').click()
    submit(page)
    assert "Dose given recorded: 1000 mg at 07:5" in page.inner_text("ul.messagelist")
    stored = queries.order(his_store, pid, order["orderId"])
    assert stored["status"] == "in_progress"  # the first dose started it
    assert [e["slotId"] for e in stored["administrations"]] == [eight]


def test_the_charts_administer_is_the_record_form_and_a_second_dose_says_when_the_first_was(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        shots) -> None:
    clock, pid, oid = amoxicillin_tds(fixed_clock, his_store, "Zweimal", "M105", "07:30")
    clock.at("13:45")
    base = live_server.url
    page = signed_in(browser, base, "nurse")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.locator("#orders .administer-link").click()
    said = page.inner_text(".mar-record-for")
    assert "dose due Wed 10 Jun, 14:00" in said and "Back to the chart" in said
    for field in ("#id_status_0", "#id_administered_at", "#id_reason", "#id_scanned_id"):
        expect(page.locator(field), field).to_have_count(1)
    units = page.locator("#id_unit option").all_inner_texts()
    assert "milligram" in units and "mg" not in units  # the list, in words
    shoot(page, shots, "chart-administer-form")
    submit(page)
    assert "Dose given recorded: 500 mg at 13:45 (the 14:00 dose)." in page.inner_text(
        "ul.messagelist")
    assert page.url.rstrip("/").endswith(pid)  # back on the chart
    shoot(page, shots, "chart-after-administer-as-nurse")

    page.locator("#orders .administer-link").click()  # the same minute, again
    assert "already given at 13:45" in page.inner_text("#already-recorded")
    shoot(page, shots, "chart-administer-again")
    submit(page)
    errors = page.inner_text("ul.errorlist")
    assert "The 14:00 dose is already given at 13:45." in errors
    assert "No dose time is due" not in errors
    assert len(queries.order(his_store, pid, oid)["administrations"]) == 1


def test_a_once_daily_order_placed_in_the_afternoon_says_when_its_first_dose_is_due(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        shots) -> None:
    fixed_clock("2026-06-10", "15:10")
    pid = admitted(his_store, "Taeglich", "M106")
    oid = place(his_store, pid, medication_code="OMEP", dose=Decimal("20"), unit="mg",
                route="PO", frequency="OD")
    tomorrow = slot_of(oid, "2026-06-11", "08:00")
    base = live_server.url
    page = signed_in(browser, base, "nurse", width=1024)
    page.goto(f"{base}/admin/patients/{pid}/")
    page.locator("#orders .administer-link").click()
    assert "first dose is due Thu 11 Jun, 08:00" in page.inner_text("#next-dose")
    shoot(page, shots, "once-daily-first-dose")
    submit(page)
    errors = page.inner_text("#content")
    shoot(page, shots, "once-daily-which-dose-time")
    assert "the first is due Thu 11 Jun, 08:00" in errors
    assert "Every dose time of this order on that day is recorded" not in errors
    page.check(f'input[name="slot_id"][value="{tomorrow}"]')
    submit(page)
    warning = page.locator('#guard-warnings .guard-warning[data-check="early-dose"]')
    warning.locator("textarea").fill("First dose now as agreed with the ward doctor")
    submit(page)
    assert "Dose given recorded: 20 mg at 15:1" in page.inner_text("ul.messagelist")
    [entry] = queries.order(his_store, pid, oid)["administrations"]
    assert entry["slotId"] == tomorrow and entry["overrides"][0]["check"] == "early-dose"


def test_the_downtime_print_keeps_overrides_and_identity_confirmed_by_scan(
        fixed_clock, live_server, browser, staff, his_store, reference_data,  # noqa: F811
        shots) -> None:
    day = "2026-06-10"
    clock, pid, oid = amoxicillin_tds(fixed_clock, his_store, "Papier", "M107", "07:30")
    mrn = queries.patient(his_store, pid)["mrn"]
    clock.at("12:30")  # the 14:00 dose, 90 minutes early, band scanned
    use_cases.administer(use_cases.Administer(
        pid, oid, Decimal("500"), "mg", slot_id=slot_of(oid, day, "14:00"), scanned_id=mrn,
        overrides={"early-dose": "Leaving for theatre at 13:00, surgeon agreed"}),
        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.administer(use_cases.Administer(  # the 20:00 one, held hours ahead
        pid, oid, status="not_given", reason="held", slot_id=slot_of(oid, day, "20:00"),
        overrides={"early-not-given": GOOD}), UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    base = live_server.url
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    for user in ("doctor", "nurse"):
        as_user(page, base, user)
        page.goto(f"{base}/admin/patients/{pid}/mar/?date={day}")
        shoot(page, shots, f"mar-as-{user}")
        page.goto(f"{base}/admin/patients/{pid}/mar/print/?date={day}")
        sheet = page.inner_text("body")
        assert "✓ Identity confirmed by scan" in sheet
        assert "Early dose overridden by" in sheet and "Leaving for theatre" in sheet
        assert "Not given ahead of time overridden by" in sheet and GOOD in sheet
        assert "Held" in sheet and "recorded 12:30" in sheet
        shoot(page, shots, f"mar-print-as-{user}")


def test_a_lab_value_and_a_medication_limit_take_a_decimal_comma_in_the_browser(
        fixed_clock, live_server, browser, staff, make_user, his_store,  # noqa: F811
        reference_data, shots) -> None:
    fixed_clock("2026-06-10", "10:00")
    make_user("boss", "admin")
    pid = admitted(his_store, "Labor", "M108")
    lab = use_cases.place_order(use_cases.PlaceOrder(patient_id=pid, kind="lab",
                                                     test_code="CBC"),
                                UnitOfWork(his_store), actor=SYSTEM_ACTOR).order_id
    use_cases.progress_order(use_cases.ProgressOrder(pid, lab, "start"), UnitOfWork(his_store),
                             actor=SYSTEM_ACTOR)
    base = live_server.url
    page = signed_in(browser, base, "nurse")
    page.goto(f"{base}/admin/patients/{pid}/orders/{lab}/results/")
    wbc = page.locator('input[name="results.WBC"]')
    assert wbc.get_attribute("type") == "text" and wbc.get_attribute("inputmode") == "decimal"
    page.fill('input[name="results.HGB"]', "120")
    wbc.fill("1 000")
    page.fill('input[name="results.PLT"]', "250")
    submit(page)
    assert "without spaces" in page.inner_text("ul.errorlist")
    assert wbc.input_value() == "1 000"
    shoot(page, shots, "results-refused")
    wbc.fill("7,5")
    submit(page)
    values = queries.order(his_store, pid, lab)["results"]["values"]
    assert {v["analyte"]: Decimal(str(v["value"])) for v in values}["WBC"] == Decimal("7.5")
    as_user(page, base, "doctor")
    page.goto(f"{base}/admin/patients/{pid}/")
    assert "7.5" in page.inner_text("#results")
    shoot(page, shots, "results-on-chart-as-clinician")

    as_user(page, base, "boss")
    page.goto(f"{base}/admin/reference/Medication/IBU/")
    page.fill("#id_prn_min_interval_hours", "6,5")
    shoot(page, shots, "reference-medication-comma")
    submit(page)
    saved = his_store.read(keys.reference("Medication"), "IBU")["docContents"]
    assert saved["prnMinIntervalHours"] == 6.5
