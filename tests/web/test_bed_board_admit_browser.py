"""The bed board as a clerk, in a real browser: a free bed's "Admit here" finds the patient
and opens the admit form with the ward and bed filled; the form keeps what was typed through
"Choose on the bed board"; a held stream (a failed projection, /healthz degraded) puts the
red "updates stopped" notice on the worklists and the board until it is released.
Each flow runs once, at 1280 px; the admit pages are photographed at 1280 and 1920 px.
Screenshots go to ``$SCREENSHOT_DIR``."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cosmos_backend.store import DocumentStore
from hisadmin.core import held_streams, keys
from tests.web.browser_shots import at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FLOW_WIDTH = 1280
# The screenshots' widths, the flow's last: each ends back at the width the flow runs at.
SHOT_WIDTHS = (1920, FLOW_WIDTH)


def _register(team: dict, family: str) -> str:
    return team["clerk"].post("/api/v1/patients", {
        "given_name": "Mira", "family_name": family, "birth_date": "1970-04-12"},
        content_type="application/json").json()["id"]


def test_it_admits_from_a_free_bed_and_keeps_the_form_through_bed_picking(
        live_server, browser, make_user, team, drain_worklists: Callable[[], int],  # noqa: F811
        shots: Path) -> None:
    make_user("desk", "clerk")
    doctor = make_user("drhale", "clinician")
    doctor.first_name, doctor.last_name = "Rosa", "Hale"
    doctor.save()
    pid = _register(team, "Okafor")
    drain_worklists()
    base = live_server.url
    ctx = browser.new_context(viewport={"width": FLOW_WIDTH, "height": 900})
    page = ctx.new_page()
    login(page, base, "desk")

    page.goto(f"{base}/admin/wards/CARD-A/")
    page.click("#bed-A03 .admit-here")
    page.wait_for_selector("#worklist-intro")
    assert "Cardiology Ward A · bed A03" in page.inner_text("#worklist-intro")
    page.fill("#searchbar", "Okafor")
    page.click("#changelist-search input[type=submit]")
    page.wait_for_selector("#result_list a.button:has-text('Admit here')")
    at_widths(page, shots, "admit-here-search", widths=SHOT_WIDTHS)
    page.click("#result_list a.button:has-text('Admit here')")
    page.wait_for_selector("#id_reason")
    assert f"/patients/{pid}/admit/" in page.url
    assert page.input_value("#id_ward_id") == "CARD-A"
    assert page.input_value("#id_bed") == "A03"

    page.fill("#id_reason", "Chest pain, troponin rising")
    page.select_option("#id_attending", label="Rosa Hale")
    page.click("#pick-on-board")
    page.wait_for_selector("#bed-pick")
    at_widths(page, shots, "admit-pick-board", widths=SHOT_WIDTHS)
    page.click("#bed-A05 a.button")
    page.wait_for_selector("#id_reason")
    assert page.input_value("#id_bed") == "A05"
    assert page.input_value("#id_reason") == "Chest pain, troponin rising"  # kept
    assert page.inner_text("#id_attending option:checked") == "Rosa Hale"
    at_widths(page, shots, "admit-form-kept", widths=SHOT_WIDTHS)
    page.click("input[name=_save]")
    page.wait_for_selector("text=Admitted.")
    ctx.close()


def test_it_shows_that_updates_stopped_while_a_stream_is_held_and_clears_it(
        live_server, browser, make_user, team, his_store: DocumentStore,  # noqa: F811
        drain_worklists: Callable[[], int], shots: Path) -> None:
    make_user("desk", "clerk")
    pid = _register(team, "Lindgren")
    drain_worklists()
    base = live_server.url
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    login(page, base, "desk")
    page.goto(f"{base}/admin/wards/CARD-A/")
    assert page.query_selector("#updates-stopped") is None  # nothing stopped: no notice

    failed_at = (datetime.now(UTC) - timedelta(seconds=45)).isoformat()
    marker = held_streams.hold(his_store, stream_pk=keys.patient(pid), seq=1,
                               event_type="PatientRegistered", occurred_at=failed_at,
                               reason="projection failed (test)")
    assert live_server.url and team["clerk"].get("/healthz").status_code == 503
    page.wait_for_selector("#updates-stopped", timeout=10_000)  # the board's next refresh
    assert re.search(r"Updates stopped 4\d s ago", page.inner_text("#updates-stopped"))
    page.screenshot(path=str(shots / "stopped-board-1280.png"), full_page=True)
    for width in (1280, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{base}/admin/worklists/admitted/?department=all")
        page.wait_for_selector("#updates-stopped")
        page.screenshot(path=str(shots / f"stopped-worklist-{width}.png"), full_page=True)

    held_streams.release(his_store, marker)
    page.wait_for_selector("#updates-stopped", state="detached", timeout=10_000)  # resumed
    ctx.close()
